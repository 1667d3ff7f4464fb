import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureDevCertificate } from './packages/server/src/crypto/dev-certificate.js';
import { startTestServer } from './packages/server/src/test-support/server.js';
// eslint-disable-next-line
import { createRequire } from 'node:module';
const { dump, deploy } = createRequire(import.meta.url)('auth0-deploy-cli');

process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const certDir = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cert-'));
const { certFile, keyFile } = await ensureDevCertificate(certDir);
const log: string[] = [];
const server = await startTestServer({
  env: { GATEHOUSE_TLS_CERT: certFile, GATEHOUSE_TLS_KEY: keyFile },
  configure: (app) => app.addHook('onResponse', async (req, reply) => { log.push(`${req.method} ${req.url} ${reply.statusCode}`); }),
});
const domain = new URL(server.url).host;
const config = { AUTH0_DOMAIN: domain, AUTH0_CLIENT_ID: server.admin.client_id, AUTH0_CLIENT_SECRET: server.admin.client_secret, AUTH0_ALLOW_DELETE: false };
const mode = process.argv[2] ?? 'dump';
try {
  await dump({ output_folder: '/tmp/probe/yaml', format: 'yaml', config });
} catch (e) { console.log('DUMP ERROR', (e as Error).message?.slice(0, 500), (e as {type?: string}).type); }
if (mode === 'deploy') {
  try { await deploy({ input_file: '/tmp/probe/yaml/tenant.yaml', config }); } catch (e) { console.log('DEPLOY ERROR', (e as Error).message?.slice(0, 500), (e as {type?: string}).type); }
}
console.log(log.join('\n'));
await server.close();
