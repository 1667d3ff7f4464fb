/** GATEHOUSE_DEVELOPMENT_KEYS: read strictly at start, and a bad value is refused with a message that names it. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { parseDevelopmentKeys, SOCIAL_PRESETS } from './development-keys.js';
import { FEDERATION_STRATEGIES } from './strategies.js';

describe('development keys', () => {
  it('are read per preset', () => {
    expect(parseDevelopmentKeys(undefined, SOCIAL_PRESETS)).toEqual({});
    expect(parseDevelopmentKeys('{"github":{"client_id":"a","client_secret":"b"}}', SOCIAL_PRESETS)).toEqual({ github: { client_id: 'a', client_secret: 'b' } });
    // Apple's: the Services ID, the team, the key's id and the key (its secret is a JWT signed per use).
    expect(parseDevelopmentKeys('{"apple":{"client_id":"a","team_id":"t","kid":"k","app_secret":"p","extra":"x"}}', SOCIAL_PRESETS)).toEqual({ apple: { client_id: 'a', team_id: 't', kid: 'k', app_secret: 'p' } });
  });

  it('refuse what cannot work, without repeating a secret', () => {
    for (const [value, said] of [
      ['not json', /expected JSON/],
      ['[]', /JSON object/],
      ['{"oidc":{"client_id":"a","client_secret":"b"}}', /unknown preset oidc/],
      ['{"github":{"client_id":"a"}}', /github needs/],
      ['{"github":{"client_id":"a","client_secret":""}}', /github needs/],
      ['{"apple":{"client_id":"a","client_secret":"b"}}', /apple needs a non-empty client_id, team_id, kid, app_secret/],
    ] as const) {
      const result = parseDevelopmentKeys(value, SOCIAL_PRESETS);
      expect(result).toMatch(said);
    }
    const secret = 'do-not-print-me';
    expect(() => loadConfig({ GATEHOUSE_DEVELOPMENT_KEYS: `{"github":{"client_secret":"${secret}"}}` }, { dataDir: '/tmp' })).toThrow(ConfigError);
    try {
      loadConfig({ GATEHOUSE_DEVELOPMENT_KEYS: `{"github":{"client_secret":"${secret}"}}` }, { dataDir: '/tmp' });
    } catch (error) {
      expect(String(error)).not.toContain(secret);
    }
  });

  it('name exactly the presets that can use them', () => {
    const presets = Object.values(FEDERATION_STRATEGIES).filter((s) => s.usesDevelopmentKeys !== undefined).map((s) => s.name);
    expect([...presets].sort()).toEqual([...SOCIAL_PRESETS].sort());
  });
});
