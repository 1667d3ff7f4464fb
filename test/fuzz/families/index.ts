/**
 * The fuzzing families, in the order the campaign runs them. The races come first: the management family may
 * change attack-protection settings, as any administrator may.
 */
import { attackProtectionRace } from './attack-protection-race.js';
import { authentication } from './authentication.js';
import { bearerTokens } from './bearer-tokens.js';
import { dbconnections } from './dbconnections.js';
import type { Family } from './family.js';
import { frontChannel } from './front-channel.js';
import { httpEdge } from './http-edge.js';
import { management } from './management.js';
import { queryComplexity } from './query-complexity.js';
import { saml } from './saml.js';
import { samlSp } from './saml-sp.js';

export const FAMILIES: Family<never>[] = [attackProtectionRace, authentication, dbconnections, frontChannel, saml, samlSp, bearerTokens, httpEdge, queryComplexity, management] as unknown as Family<never>[];
