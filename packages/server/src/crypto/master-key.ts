/**
 * The master key: GATEHOUSE_MASTER_KEY when set, otherwise `master.key` in the data dir, generated on first
 * start with mode 0600. Losing it makes every sealed secret unreadable, so it is never regenerated over an
 * existing file.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, decodeMasterKey } from '../config.js';

export function loadMasterKey(configured: string | undefined, dataDir: string): { key: Buffer; source: string } {
  if (configured) {
    const key = decodeMasterKey(configured);
    if (!key) throw new ConfigError('GATEHOUSE_MASTER_KEY: expected 32 bytes as hex or base64');
    return { key, source: 'GATEHOUSE_MASTER_KEY' };
  }
  const file = path.join(dataDir, 'master.key');
  if (existsSync(file)) {
    const key = decodeMasterKey(readFileSync(file, 'utf8'));
    if (!key) throw new ConfigError(`${file}: not a 32-byte key in base64; restore the original file`);
    return { key, source: file };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  // 'wx' fails if another process created it first; then read theirs so both use the same key.
  try {
    writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadMasterKey(undefined, dataDir);
    throw err;
  }
  return { key, source: file };
}
