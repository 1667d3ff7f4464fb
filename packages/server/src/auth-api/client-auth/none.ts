/** `none`: a public client names itself and proves nothing; callers allow it only for grants that permit it. */
import type { ClientAuthenticator } from './types.js';

export const none: ClientAuthenticator = async () => undefined;
