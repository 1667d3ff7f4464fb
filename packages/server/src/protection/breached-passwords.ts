/**
 * Breached-password detection against a local corpus (this machine has no internet, so no k-anonymity lookup
 * such as Have I Been Pwned's range API): the 49,233 most common passwords of public breach compilations as
 * shipped by @zxcvbn-ts/language-common (MIT; the list zxcvbn derives from breach data), plus the
 * common-password list of connections/password-policy.ts. It catches what credential stuffing tries first, not
 * every password ever leaked. Matching ignores case, as the dictionary check does: breach corpora hold every
 * capitalisation of these.
 */
import { createRequire } from 'node:module';
import type * as LanguageCommon from '@zxcvbn-ts/language-common';
import { checkPassword } from '../connections/password-policy.js';

let corpus: ReadonlySet<string> | undefined;

/**
 * Loaded on the first check, not at start-up: the package decompresses all its dictionaries when it is loaded,
 * a tenth of a second of every `gatehouse start` before it answers.
 */
function breachedCorpus(): ReadonlySet<string> {
  if (!corpus) {
    const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as typeof LanguageCommon;
    corpus = new Set((dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()));
  }
  return corpus;
}

/** How many passwords the corpus holds (for the settings' description and tests). */
export function breachedCorpusSize(): number {
  return breachedCorpus().size;
}

/** `dictionary` mode of the connection password policy, used only for its common-password list. */
const COMMON_LIST_ONLY = { passwordPolicy: 'none', password_dictionary: { enable: true } } as const;

export function isBreachedPassword(password: string): boolean {
  if (!password) return false;
  if (breachedCorpus().has(password.toLowerCase())) return true;
  const check = checkPassword(password, COMMON_LIST_ONLY);
  return !check.ok && check.code === 'password_dictionary_error';
}
