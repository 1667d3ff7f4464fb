/** Restart a test server's storage under a different configuration (a changed public URL, say). */
import { loadConfig } from '../config.js';
import { startServer, type RunningServer } from '../server.js';
import { freePort } from './services.js';
import type { TestServer } from './server.js';

export async function restartWith(test: TestServer, env: Record<string, string>): Promise<RunningServer> {
  await test.stop();
  const config = loadConfig(
    { GATEHOUSE_LOG_LEVEL: 'silent', ...env },
    { port: await freePort(), host: '127.0.0.1', dataDir: test.dataDir, databaseUrl: test.databaseUrl },
  );
  return startServer(config, { log: false });
}
