/** Starts and stops the server under fuzzing (target-process.ts) and reads its memory. */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startTestSmtp } from '../../packages/server/src/test-support/smtp.js';

export interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

export interface Target {
  url: string;
  admin: { client_id: string; client_secret: string };
  /** What no response may contain, by name. */
  secrets: Record<string, string>;
  tenantId: string;
  managementAudience: string;
  /** The server's memory after a full garbage collection. */
  measure(): Promise<Memory>;
  stop(): Promise<void>;
}

export async function startTarget(): Promise<Target> {
  const smtp = await startTestSmtp({ user: 'fuzz-mailer', pass: `smtp-${randomBytes(12).toString('base64url')}` });
  const child: ChildProcess = fork(fileURLToPath(new URL('./target-process.ts', import.meta.url)), [], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, FUZZ_SMTP_URL: smtp.url },
  });
  const next = (type: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const onMessage = (message: Record<string, unknown>) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message);
      };
      const onExit = (code: number | null) => reject(new Error(`the fuzz target exited (${code}) before sending ${type}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ready = await next('ready').catch(async (error: unknown) => {
    await smtp.close();
    throw error;
  });
  return {
    url: ready.url as string,
    admin: ready.admin as Target['admin'],
    secrets: ready.secrets as Record<string, string>,
    tenantId: ready.tenantId as string,
    managementAudience: ready.managementAudience as string,
    measure: async () => {
      const reply = next('memory');
      child.send({ type: 'measure' });
      return (await reply) as unknown as Memory;
    },
    stop: async () => {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send({ type: 'stop' });
      });
      await smtp.close();
    },
  };
}
