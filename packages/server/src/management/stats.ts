/**
 * /api/v2/stats, computed from the tenant's log events (their rollups, store/log-stats.ts and logs/rollups.ts):
 *  - `GET /stats/active-users`: a bare number, the users with a successful login in the last 30 days;
 *  - `GET /stats/daily?from=YYYYMMDD&to=YYYYMMDD` (both inclusive, UTC days): per day, `logins`,
 *    `signups` (`ss`) and `leaked_passwords` (`pwd_leak`, `signup_pwd_leak`), with `created_at`/`updated_at` the
 *    first and last of those events that day.
 *
 * A successful login is `s` (the hosted pages, passwordless) or `sepft` (a password grant: the user signed in
 * without a page).
 *
 * Where the reference is silent: only days with at least one such event are listed, oldest first; without
 * `from` the range starts 30 days before `to` (default today); a range may span at most MAX_DAYS days; logs past
 * the tenant's retention are gone, and so are their counts.
 */
import { Type } from '@fastify/type-provider-typebox';
import { InvalidInput } from '../http/errors.js';
import { errorResponses } from '../http/responses.js';
import type { App, Services } from '../services.js';
import { countActiveUsers, countDaily, DAY_MS } from '../store/log-stats.js';
import { operation } from './operation.js';

const ACTIVE_WINDOW_DAYS = 30;
const DEFAULT_DAYS = 30;
const MAX_DAYS = 366;

const COUNTED: Record<string, 'logins' | 'signups' | 'leaked_passwords'> = {
  s: 'logins',
  sepft: 'logins',
  ss: 'signups',
  pwd_leak: 'leaked_passwords',
  signup_pwd_leak: 'leaked_passwords',
};

const Day = Type.String({ pattern: '^[0-9]{8}$', description: 'A UTC day, YYYYMMDD' });
const DailyQuery = Type.Object({ from: Type.Optional(Day), to: Type.Optional(Day) }, { additionalProperties: false });
const DailyStats = Type.Object({
  date: Type.String({ format: 'date-time' }),
  logins: Type.Integer(),
  signups: Type.Integer(),
  leaked_passwords: Type.Integer(),
  updated_at: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
});

/** Midnight UTC of a YYYYMMDD day, or a 400 naming the parameter. */
function dayStart(value: string, name: string): number {
  const time = Date.UTC(Number(value.slice(0, 4)), Number(value.slice(4, 6)) - 1, Number(value.slice(6, 8)));
  const date = new Date(time);
  if (Number.isNaN(time) || date.toISOString().slice(0, 10).replaceAll('-', '') !== value) {
    throw new InvalidInput('querystring', `${name}: ${value} is not a day (YYYYMMDD)`);
  }
  return time;
}

export function registerStats(api: App, services: Services): void {
  const db = services.store.db;

  api.get('/stats/active-users', {
    ...operation(['read:stats'], {
      summary: 'Count the users who logged in during the last 30 days',
      response: { 200: Type.Integer({ minimum: 0, description: 'The number of distinct users with a successful login (s or sepft) in the last 30 days' }) },
    }),
    handler: async (request) => countActiveUsers(db, request.tenant.id, Date.now() - ACTIVE_WINDOW_DAYS * DAY_MS),
  });

  api.get('/stats/daily', {
    ...operation(['read:stats'], {
      summary: 'Logins, signups and breached-password detections per day',
      querystring: DailyQuery,
      response: {
        200: Type.Array(DailyStats),
        ...errorResponses('management', { 400: `invalid_query_string: from or to is not a day, from is after to, or the range spans more than ${MAX_DAYS} days` }),
      },
    }),
    handler: async (request) => {
      const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
      const to = request.query.to !== undefined ? dayStart(request.query.to, 'to') : today;
      const from = request.query.from !== undefined ? dayStart(request.query.from, 'from') : to - (DEFAULT_DAYS - 1) * DAY_MS;
      if (from > to) throw new InvalidInput('querystring', 'from: must not be after to');
      if ((to - from) / DAY_MS + 1 > MAX_DAYS) throw new InvalidInput('querystring', `from, to: a range may span at most ${MAX_DAYS} days`);
      const counts = await countDaily(db, request.tenant.id, Object.keys(COUNTED), from, to + DAY_MS);
      const days = new Map<number, { logins: number; signups: number; leaked_passwords: number; first: number; last: number }>();
      for (const count of counts) {
        const day = days.get(count.day) ?? { logins: 0, signups: 0, leaked_passwords: 0, first: count.first, last: count.last };
        day[COUNTED[count.type]!] += count.n;
        day.first = Math.min(day.first, count.first);
        day.last = Math.max(day.last, count.last);
        days.set(count.day, day);
      }
      return [...days.entries()]
        .sort(([a], [b]) => a - b)
        .map(([day, stats]) => ({
          date: new Date(day * DAY_MS).toISOString(),
          logins: stats.logins,
          signups: stats.signups,
          leaked_passwords: stats.leaked_passwords,
          updated_at: new Date(stats.last).toISOString(),
          created_at: new Date(stats.first).toISOString(),
        }));
    },
  });
}
