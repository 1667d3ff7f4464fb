/**
 * `gatehouse start --https`: a self-signed certificate for localhost, made once into the data dir and reused,
 * so a browser exception or NODE_EXTRA_CA_CERTS set up for it keeps working across restarts.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generate } from 'selfsigned';

export async function ensureDevCertificate(dataDir: string): Promise<{ certFile: string; keyFile: string; created: boolean }> {
  const certFile = path.join(dataDir, 'dev-tls-cert.pem');
  const keyFile = path.join(dataDir, 'dev-tls-key.pem');
  if (existsSync(certFile) && existsSync(keyFile)) return { certFile, keyFile, created: false };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    notAfterDate: new Date(Date.now() + 825 * 86_400_000),
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  writeFileSync(keyFile, pems.private, { mode: 0o600 });
  writeFileSync(certFile, pems.cert, { mode: 0o600 });
  return { certFile, keyFile, created: true };
}
