/**
 * Test support: a real SMTP server (smtp-server) on a free loopback port that receives what the mailer sends,
 * requires the credentials the test gives it, and can refuse the next messages with a chosen SMTP code. Messages
 * are parsed just enough to read them: headers, and the text and HTML parts decoded from quoted-printable or
 * base64.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedEmail {
  from: string;
  to: string[];
  subject: string;
  headers: Map<string, string>;
  text: string;
  html: string;
  raw: string;
}

export interface TestSmtp {
  /** `smtp://user:password@127.0.0.1:<port>`, for GATEHOUSE_SMTP_URL. */
  url: string;
  received: ReceivedEmail[];
  /** Refuses the next `count` messages with `code` (4xx: try again later; 5xx: never). */
  refuseNext(count: number, code: number): void;
  /** Waits until a message matching `match` has arrived (the bound, 60 s by default, only reports a hang). */
  waitFor(match: (email: ReceivedEmail) => boolean, timeoutMs?: number): Promise<ReceivedEmail>;
  close(): Promise<void>;
}

function decodeQuotedPrintable(value: string): string {
  const bytes = value.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function splitEntity(raw: string): { headers: Map<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  if (at < 0) return { headers: parseHeaders(raw), body: '' };
  const separator = raw.slice(at).startsWith('\r\n\r\n') ? 4 : 2;
  return { headers: parseHeaders(raw.slice(0, at)), body: raw.slice(at + separator) };
}

function decodeBody(headers: Map<string, string>, body: string): string {
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** The text/plain and text/html leaves of a (possibly nested) multipart message. */
function leaves(headers: Map<string, string>, body: string, out: { text: string; html: string }): void {
  const type = headers.get('content-type') ?? 'text/plain';
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (/^multipart\//i.test(type) && boundary) {
    for (const part of body.split(`--${boundary}`).slice(1)) {
      if (part.startsWith('--')) break;
      const entity = splitEntity(part.replace(/^\r?\n/, ''));
      leaves(entity.headers, entity.body, out);
    }
    return;
  }
  if (/^text\/html/i.test(type)) out.html = decodeBody(headers, body);
  else if (/^text\/plain/i.test(type)) out.text = decodeBody(headers, body);
}

export function parseEmail(raw: string, envelope: { from: string; to: string[] }): ReceivedEmail {
  const { headers, body } = splitEntity(raw);
  const parts = { text: '', html: '' };
  leaves(headers, body, parts);
  return { from: envelope.from, to: envelope.to, subject: headers.get('subject') ?? '', headers, ...parts, raw };
}

export async function startTestSmtp(credentials = { user: 'mailer', pass: 's3cret-smtp-pass' }): Promise<TestSmtp> {
  const received: ReceivedEmail[] = [];
  const waiters = new Set<() => void>();
  let refusals: { count: number; code: number } = { count: 0, code: 0 };
  const server = new SMTPServer({
    // Plain SMTP with AUTH on loopback: what a test needs, without certificates.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === credentials.user && auth.password === credentials.pass) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (refusals.count > 0) {
          refusals = { ...refusals, count: refusals.count - 1 };
          callback(Object.assign(new Error('Refused by the test'), { responseCode: refusals.code }));
          return;
        }
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        received.push(parseEmail(Buffer.concat(chunks).toString('utf8'), { from, to: session.envelope.rcptTo.map((r) => r.address) }));
        for (const wake of waiters) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@127.0.0.1:${port}`,
    received,
    refuseNext(count, code) {
      refusals = { count, code };
    },
    waitFor(match, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find(match);
          if (!found) return false;
          clearTimeout(timer);
          waiters.delete(wake);
          resolve(found);
          return true;
        };
        const wake = () => void check();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`no matching email within ${timeoutMs} ms (received: ${received.map((e) => `${e.to.join(',')}: ${e.subject}`).join('; ') || 'none'})`));
        }, timeoutMs);
        if (!check()) waiters.add(wake);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The first link in an email's text part that starts with `prefix`. */
export function linkIn(email: ReceivedEmail, prefix: string): string {
  const link = email.text.match(/https?:\/\/\S+/g)?.find((url) => url.startsWith(prefix));
  if (!link) throw new Error(`no link to ${prefix} in: ${email.text}`);
  return link;
}
