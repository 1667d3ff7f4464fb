/** `prompt` (none, login, consent; `none` alone) and `max_age` (seconds), OIDC Core §3.1.2.1. */
import { InvalidRequest } from '../../../http/errors.js';
import type { Prompt } from '../request.js';
import type { AuthorizeCheck } from './context.js';

const PROMPTS: readonly Prompt[] = ['none', 'login', 'consent'];

export const checkPrompt: AuthorizeCheck = (context) => {
  const raw = (context.params.prompt ?? '').trim();
  const prompts = raw ? [...new Set(raw.split(/\s+/))] : [];
  const unknown = prompts.filter((p) => !(PROMPTS as readonly string[]).includes(p));
  if (unknown.length > 0) throw new InvalidRequest(`Unsupported prompt value: ${unknown.join(' ').slice(0, 50)}`);
  if (prompts.includes('none') && prompts.length > 1) throw new InvalidRequest('prompt=none cannot be combined with other values');
  context.request.prompt = prompts as Prompt[];
  // A web_message response never shows UI: it is answered silently or with an error.
  if (context.request.responseMode === 'web_message' && !prompts.includes('none')) context.request.prompt = ['none'];

  const maxAge = context.params.max_age;
  if (maxAge !== undefined && maxAge !== '') {
    if (!/^\d{1,10}$/.test(maxAge)) throw new InvalidRequest('max_age must be a non-negative integer (seconds)');
    context.request.maxAge = Number(maxAge);
  }
};
