/**
 * Development keys: the operator's own client id and secret at a social provider (one pair per preset, never per
 * tenant), from GATEHOUSE_DEVELOPMENT_KEYS (JSON: `{"google-oauth2": {"client_id": "…", "client_secret": "…"}}`).
 * A social connection created without keys of its own uses them. Sign-ins through them are interactive only:
 * silent authentication answers `login_required` even with a live session (library rule 4), as the reference
 * does, since the keys are shared by every tenant of this server.
 */
/** The social presets that can use development keys. */
export const SOCIAL_PRESETS: readonly string[] = ['google-oauth2', 'github', 'windowslive', 'facebook', 'linkedin'];

export interface DevelopmentKeys {
  client_id: string;
  client_secret: string;
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
    const { client_id, client_secret } = (keys ?? {}) as Record<string, unknown>;
    if (typeof client_id !== 'string' || client_id === '' || typeof client_secret !== 'string' || client_secret === '') {
      return `GATEHOUSE_DEVELOPMENT_KEYS: ${preset} needs a non-empty client_id and client_secret`;
    }
    ring[preset] = { client_id, client_secret };
  }
  return ring;
}
