/** Runs the built `gatehouse` CLI as a child process, as a user would. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export const CLI = path.resolve('packages/server/dist/cli.js');

export interface CliProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves when stdout+stderr match, rejects on exit or timeout (90 s by default: a bound for a hang, not a speed). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function runCli(args: string[], env: Record<string, string>): CliProcess {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run the build first (npm run build)`);
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GATEHOUSE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const listener of listeners) listener();
      resolve({ code, signal });
    }),
  );
  return {
    child,
    output: () => text,
    exited,
    waitFor: (pattern, timeoutMs = 90_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = text.match(pattern);
          if (match) return done(() => resolve(match));
          if (child.exitCode !== null) done(() => reject(new Error(`exited (${child.exitCode}) before ${pattern}:\n${text}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`timed out waiting for ${pattern}:\n${text}`))), timeoutMs);
        const done = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      }),
  };
}

/** Runs a CLI command to completion. */
export async function runCliToEnd(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const run = runCli(args, env);
  const { code } = await run.exited;
  return { code, output: run.output() };
}
