/**
 * The factors against real storage on both dialects, with codes computed by otplib from the secret as an
 * authenticator app would: TOTP enrollment and its sealed secret, the ±1 step window, replay refusal (also
 * under a concurrent burst), recovery codes hashed and single use, and the lockout after 10 wrong answers.
 */
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../test-support/sign-in.js';
import { startTestServer, type TestServer } from '../test-support/server.js';
import { postgresAvailable } from '../test-support/services.js';
import { listMfaEnrollments } from '../store/mfa-enrollments.js';
import type { FactorContext } from './factor.js';
import { checkAnswer, liftMfaLock, MFA_MAX_WRONG_ANSWERS } from './lockout.js';
import { recoveryCode } from './recovery-code.js';
import { totp } from './totp.js';

const dialects = (await postgresAvailable()) ? (['sqlite', 'postgres'] as const) : (['sqlite'] as const);
let counter = 0;

describe.each(dialects)('MFA factors (%s)', (dialect) => {
  let test: TestServer;
  beforeAll(async () => {
    test = await startTestServer({ dialect });
  });
  afterAll(async () => {
    await test?.close();
  });

  async function contextForNewUser(now = Date.now()): Promise<FactorContext> {
    const { user_id } = await createUser(test, `mfa${Date.now()}${counter++}@example.com`, 'correct horse battery staple 42');
    const { services } = test.server;
    return { db: services.store.db, sealer: services.sealer, tenantId: test.server.prepared.bootstrap!.tenant.id, userId: user_id, now };
  }

  it('enrolls TOTP with a sealed secret, resumes the pending enrollment, and confirms it with the first code', async () => {
    const context = await contextForNewUser();
    const started = await totp.enroll(context, { issuer: 'Gatehouse', label: 'someone@example.com' });
    expect(started.uri).toMatch(/^otpauth:\/\/totp\/Gatehouse:someone%40example\.com\?secret=[A-Z2-7]+/);
    expect(started.uri).toContain(`secret=${started.secret}`);
    const [row] = await listMfaEnrollments(context.db, context.tenantId, context.userId);
    expect(row).toMatchObject({ id: started.enrollment.id, type: 'totp', confirmed: false });
    expect(row!.secretSealed).not.toContain(started.secret);
    // A reload shows the same secret, not a second enrollment.
    expect((await totp.enroll(context, { issuer: 'Gatehouse', label: 'x' })).secret).toBe(started.secret);
    expect(await listMfaEnrollments(context.db, context.tenantId, context.userId)).toHaveLength(1);

    const code = await generate({ secret: started.secret, epoch: Math.floor(context.now / 1000) });
    expect(await totp.verify(context, row!, code === '000000' ? '000001' : '000000')).toBe(false);
    expect(await totp.verify(context, row!, code)).toBe(true);
    const [confirmed] = await listMfaEnrollments(context.db, context.tenantId, context.userId);
    expect(confirmed).toMatchObject({ confirmed: true, lastAuthAt: context.now });
  });

  it('accepts the steps either side, refuses older ones, and never accepts a step twice', async () => {
    const context = await contextForNewUser();
    const { secret } = await totp.enroll(context, { issuer: 'G', label: 'u' });
    const at = (seconds: number) => generate({ secret, epoch: Math.floor(context.now / 1000) + seconds });
    const fresh = async () => (await listMfaEnrollments(context.db, context.tenantId, context.userId))[0]!;
    expect(await totp.verify(context, await fresh(), await at(-90))).toBe(false);
    expect(await totp.verify(context, await fresh(), await at(-30))).toBe(true);
    // The same code again: refused (replay), as is the step before it.
    expect(await totp.verify(context, await fresh(), await at(-30))).toBe(false);
    // Two requests with the next code at once: one wins.
    const row = await fresh();
    const next = await at(0);
    const both = await Promise.all([totp.verify(context, row, next), totp.verify(context, row, next)]);
    expect(both.filter(Boolean)).toHaveLength(1);
    expect(await totp.verify(context, await fresh(), await at(30))).toBe(true);
    expect(await totp.verify(context, await fresh(), await at(0))).toBe(false);
  });

  it('keeps recovery codes as hashes only, accepts one once (typed loosely), and replaces the old one', async () => {
    const context = await contextForNewUser();
    const first = await recoveryCode.enroll(context, { issuer: 'G', label: 'u' });
    expect(first.code).toMatch(/^[A-HJ-NP-Z2-9]{24}$/);
    const second = await recoveryCode.enroll(context, { issuer: 'G', label: 'u' });
    const rows = await listMfaEnrollments(context.db, context.tenantId, context.userId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'recovery-code', confirmed: true, secretSealed: null });
    expect(rows[0]!.codeHash).not.toContain(second.code);
    expect(await recoveryCode.verify(context, rows[0]!, first.code)).toBe(false);
    const typed = `${second.code.slice(0, 12).toLowerCase()} ${second.code.slice(12)}`;
    const uses = await Promise.all([recoveryCode.verify(context, rows[0]!, typed), recoveryCode.verify(context, rows[0]!, second.code)]);
    expect(uses.filter(Boolean)).toHaveLength(1);
    expect(await listMfaEnrollments(context.db, context.tenantId, context.userId)).toHaveLength(0);
  });

  it('locks after 10 wrong answers, however many arrive at once, until lifted', async () => {
    const context = await contextForNewUser();
    const counters = test.server.services.attackProtection.counters;
    let checked = 0;
    const wrong = () => checkAnswer(counters, context.tenantId, context.userId, async () => (checked++, false));
    const outcomes = await Promise.all(Array.from({ length: 25 }, wrong));
    expect(checked).toBe(MFA_MAX_WRONG_ANSWERS);
    expect(outcomes.filter((o) => o.outcome === 'locked')).toHaveLength(15);
    expect(outcomes.filter((o) => o.outcome === 'wrong' && o.nowLocked)).toHaveLength(1);
    // Even a right answer is not checked while locked.
    expect(await checkAnswer(counters, context.tenantId, context.userId, async () => true)).toEqual({ outcome: 'locked' });
    await liftMfaLock(counters, context.tenantId, context.userId);
    expect(await checkAnswer(counters, context.tenantId, context.userId, async () => true)).toEqual({ outcome: 'right' });
  });
});
