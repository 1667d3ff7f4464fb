/**
 * Development keys: the operator's own client id and secret at a social provider (one pair per preset, never per
 * tenant), from GATEHOUSE_DEVELOPMENT_KEYS (JSON: `{"google-oauth2": {"client_id": "…", "client_secret": "…"}}`).
 * A social connection created without keys of its own uses them. Sign-ins through them are interactive only:
 * silent authentication answers `login_required` even with a live session (library rule 4), as the reference
 * does, since the keys are shared by every tenant of this server.
 */
/** The social presets that can use development keys. */
export const SOCIAL_PRESETS: readonly string[] = ['google-oauth2', 'github', 'windowslive', 'facebook', 'linkedin', 'apple'];

/**
 * What each preset's keys are: a client id and secret, except Apple's, whose secret is a JWT the service signs
 * with the team's private key (`app_secret`, a PEM) under the key's `kid` and the team's `team_id`.
 */
const KEY_FIELDS: Readonly<Record<string, readonly string[]>> = { apple: ['client_id', 'team_id', 'kid', 'app_secret'] };
const keyFieldsOf = (preset: string) => KEY_FIELDS[preset] ?? ['client_id', 'client_secret'];

export interface DevelopmentKeys {
  client_id: string;
  client_secret?: string;
  /** Apple's: the team, the key's id, and the key (PEM). */
  team_id?: string;
  kid?: string;
  app_secret?: string;
}

export type DevelopmentKeyRing = Readonly<Record<string, DevelopmentKeys>>;

/** Parses the setting; returns a message for whatever is wrong (never repeating a secret). */
export function parseDevelopmentKeys(value: string | undefined, presets: readonly string[]): DevelopmentKeyRing | string {
  if (value === undefined || value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return 'GATEHOUSE_DEVELOPMENT_KEYS: expected JSON such as {"google-oauth2": {"client_id": "…", "client_secret": "…"}}';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'GATEHOUSE_DEVELOPMENT_KEYS: expected a JSON object of presets';
  const ring: Record<string, DevelopmentKeys> = {};
  for (const [preset, keys] of Object.entries(parsed)) {
    if (!presets.includes(preset)) return `GATEHOUSE_DEVELOPMENT_KEYS: unknown preset ${preset.slice(0, 50)} (known: ${presets.join(', ')})`;
    const given = (keys ?? {}) as Record<string, unknown>;
    const fields = keyFieldsOf(preset);
    if (!fields.every((field) => typeof given[field] === 'string' && given[field] !== '')) {
      return `GATEHOUSE_DEVELOPMENT_KEYS: ${preset} needs a non-empty ${fields.join(', ')}`;
    }
    ring[preset] = Object.fromEntries(fields.map((field) => [field, given[field]])) as unknown as DevelopmentKeys;
  }
  return ring;
}
