/**
 * Attack protection under concurrency (#19 item 2): wrong passwords sent at once with the right one, for one
 * user from one client IP, through the password-realm grant or /co/authenticate. No more than the brute-force
 * threshold's worth of guesses may be verified (answered other than 429) per failure streak (a success starts
 * a new one), and when the right password was refused the account is locked afterwards. The same for
 * suspicious-IP throttling: at once, more failed logins from one IP than its bucket holds (100) may not all be
 * verified. Each input is one burst; every request of it counts as an input of the campaign.
 */
import fc from 'fast-check';
import { send, type Family, type FuzzContext, type FuzzRequest } from './family.js';

const PASSWORD = 'correct horse battery staple 42';
const THRESHOLD = 10;
const IP_BUCKET = 100;

interface Burst {
  kind: 'brute-force' | 'suspicious-ip';
  wrong: number;
  /** Where the right password goes among the wrong ones. */
  rightAt: number;
  via: 'password-realm' | 'co/authenticate';
  ip: string;
}

let users = 0;

function attempt(context: FuzzContext, burst: Burst, username: string, password: string): FuzzRequest {
  const headers = { 'content-type': 'application/json', 'x-forwarded-for': burst.ip, origin: 'https://app.example' };
  if (burst.via === 'co/authenticate') {
    return {
      method: 'POST',
      url: '/co/authenticate',
      headers,
      body: JSON.stringify({ client_id: context.clientId, credential_type: 'http://auth0.com/oauth/grant-type/password-realm', realm: 'Username-Password-Authentication', username, password }),
    };
  }
  return {
    method: 'POST',
    url: '/oauth/token',
    headers,
    body: JSON.stringify({ grant_type: 'http://auth0.com/oauth/grant-type/password-realm', client_id: context.clientId, realm: 'Username-Password-Authentication', username, password, scope: 'openid' }),
  };
}

async function createUser(context: FuzzContext): Promise<string> {
  const email = `race-${process.pid}-${Date.now().toString(36)}-${users++}@example.com`;
  const response = await fetch(`${context.target.url}/api/v2/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${context.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ connection: 'Username-Password-Authentication', email, password: PASSWORD }),
  });
  if (response.status !== 201) throw new Error(`creating the race's user: ${response.status} ${await response.text()}`);
  return email;
}

export const attackProtectionRace: Family<Burst> = {
  name: 'attack-protection-race',
  summary: `bursts of wrong passwords with the right one, at once (brute force: at most ${THRESHOLD} verified per streak; suspicious IP: at most ${IP_BUCKET})`,
  arbitrary: () =>
    fc.oneof(
      {
        weight: 9,
        arbitrary: fc.record({
          kind: fc.constant<'brute-force'>('brute-force'),
          wrong: fc.integer({ min: THRESHOLD + 1, max: 40 }),
          rightAt: fc.integer({ min: 0, max: 40 }),
          via: fc.constantFrom<Burst['via']>('password-realm', 'co/authenticate'),
          ip: fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `10.${a}.${b}.${c}`),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant<'suspicious-ip'>('suspicious-ip'),
          wrong: fc.integer({ min: IP_BUCKET + 1, max: IP_BUCKET + 30 }),
          rightAt: fc.constant(0),
          via: fc.constantFrom<Burst['via']>('password-realm', 'co/authenticate'),
          ip: fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `172.16.${a}.${b + c}`),
        }),
      },
    ),
  requestsPerInput: (burst) => burst.wrong + (burst.kind === 'brute-force' ? 2 : 0),
  run: async (context, burst) => {
    if (burst.kind === 'suspicious-ip') {
      // Many accounts, one IP: each failure takes a token from the IP's bucket.
      const results = await Promise.all(Array.from({ length: burst.wrong }, (_, i) => send(context, attempt(context, burst, `nobody-${users++}-${i}@example.com`, 'wrong password'))));
      const verified = results.filter((r) => r.exchange.status !== 429).length;
      const problems = results.flatMap((r) => r.problems);
      if (verified > IP_BUCKET) problems.push(`suspicious-IP race via ${burst.via}: ${verified} failed logins from one IP were verified at once; the bucket holds ${IP_BUCKET}`);
      return problems;
    }
    const email = await createUser(context);
    const rightAt = Math.min(burst.rightAt, burst.wrong);
    const requests = Array.from({ length: burst.wrong + 1 }, (_, i) => (i === rightAt ? attempt(context, burst, email, PASSWORD) : attempt(context, burst, email, `wrong password ${i}`)));
    const results = await Promise.all(requests.map((r) => send(context, r)));
    const problems = results.flatMap((r) => r.problems);
    const right = results[rightAt]!.exchange.status;
    const wrongVerified = results.filter((r, i) => i !== rightAt && r.exchange.status !== 429).length;
    const allowed = THRESHOLD * (right === 200 ? 2 : 1);
    if (wrongVerified > allowed) {
      problems.push(`brute-force race via ${burst.via}: ${wrongVerified} of ${burst.wrong} wrong passwords sent at once were verified (the right one: ${right}); at most ${allowed} may be`);
    }
    if (right !== 200) {
      const after = await send(context, attempt(context, burst, email, PASSWORD));
      problems.push(...after.problems);
      if (after.exchange.status !== 429) problems.push(`brute-force race via ${burst.via}: after ${burst.wrong} wrong passwords the right one is answered ${after.exchange.status}, not 429`);
    }
    return problems;
  },
};
