/** Starts and stops the server under fuzzing (target-process.ts) and reads its memory. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

export function startTarget(): Promise<Target> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./target-process.ts', import.meta.url)), [], {
    execArgv: ['--expose-gc', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
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
  return next('ready').then((ready) => ({
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
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send({ type: 'stop' });
      }),
  }));
}
