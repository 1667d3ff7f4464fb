/**
 * /api/v2/attack-protection/bot-detection and /captcha, read as disabled and refused on write: this server has no
 * bot signal (no risk score, no CAPTCHA provider), so it challenges nobody. A PATCH that states exactly that (every
 * challenge policy `never`, no allowlist, no monitoring mode; an empty CAPTCHA configuration) is answered as done,
 * since it is already true; anything that would turn a challenge on is a 501, never stored and ignored.
 * Brute force, breached passwords and suspicious IPs are real (management/attack-protection.ts).
 */
import { Type } from '@fastify/type-provider-typebox';
import { NotOffered } from '../http/errors.js';
import { errorResponses } from '../http/responses.js';
import type { App } from '../services.js';
import { operation } from './operation.js';

const Policy = Type.Union([Type.Literal('never'), Type.Literal('when_risky'), Type.Literal('always')]);
const BOT_DETECTION = {
  challenge_password_policy: 'never',
  challenge_passwordless_policy: 'never',
  challenge_password_reset_policy: 'never',
  allowlist: [] as string[],
  monitoring_mode_enabled: false,
} as const;

const BotDetectionView = Type.Object({
  challenge_password_policy: Type.Literal('never'),
  challenge_passwordless_policy: Type.Literal('never'),
  challenge_password_reset_policy: Type.Literal('never'),
  allowlist: Type.Array(Type.String(), { maxItems: 0 }),
  monitoring_mode_enabled: Type.Literal(false),
});
const BotDetectionPatch = Type.Object(
  {
    bot_detection_level: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')])),
    challenge_password_policy: Type.Optional(Policy),
    challenge_passwordless_policy: Type.Optional(Policy),
    challenge_password_reset_policy: Type.Optional(Policy),
    allowlist: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 })),
    monitoring_mode_enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const CaptchaView = Type.Object({}, { additionalProperties: false, description: 'No CAPTCHA provider is active' });
const CaptchaPatch = Type.Object({}, { additionalProperties: Type.Unknown() });

const WHY = 'is not offered: this server has no bot signal to act on, so it challenges nobody.';

export function registerBotDetection(api: App): void {
  api.get('/attack-protection/bot-detection', {
    ...operation(['read:attack_protection'], { summary: 'Get the bot detection settings (always disabled)', response: { 200: BotDetectionView } }),
    handler: async () => BOT_DETECTION,
  });

  api.patch('/attack-protection/bot-detection', {
    ...operation(['update:attack_protection'], {
      summary: 'Update the bot detection settings (only to disabled)',
      body: BotDetectionPatch,
      response: { 200: BotDetectionView, ...errorResponses('management', { 501: 'not_offered: a challenge policy other than never, an allowlist or monitoring mode' }) },
    }),
    handler: async (request) => {
      const patch = request.body;
      const policies = [patch.challenge_password_policy, patch.challenge_passwordless_policy, patch.challenge_password_reset_policy];
      // The level only tunes challenges, and none is ever made: any level with every policy `never` is the same.
      if (policies.some((p) => p !== undefined && p !== 'never') || (patch.allowlist?.length ?? 0) > 0 || patch.monitoring_mode_enabled === true) {
        throw new NotOffered('Bot detection', WHY);
      }
      return BOT_DETECTION;
    },
  });

  api.get('/attack-protection/captcha', {
    ...operation(['read:attack_protection'], { summary: 'Get the CAPTCHA settings (none active)', response: { 200: CaptchaView } }),
    handler: async () => ({}),
  });

  api.patch('/attack-protection/captcha', {
    ...operation(['update:attack_protection'], {
      summary: 'Update the CAPTCHA settings (only to none)',
      body: CaptchaPatch,
      response: { 200: CaptchaView, ...errorResponses('management', { 501: 'not_offered: any CAPTCHA provider' }) },
    }),
    handler: async (request) => {
      if (Object.keys(request.body).length > 0) throw new NotOffered('CAPTCHA', WHY);
      return {};
    },
  });
}
