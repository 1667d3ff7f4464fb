/**
 * The data directory holds the master key, the admin credentials, the SQLite database (with its WAL and shared
 * memory files) and the dev certificate: the directory is 0700 and every file in it 0600, whatever the umask,
 * and a directory or file left more open by an earlier version is tightened at start.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Creates `file` (empty) if it does not exist, and makes it 0600 either way. */
export function ensurePrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  chmodSync(file, PRIVATE_FILE_MODE);
}

/**
 * An SQLite database file made 0600 before SQLite opens it: SQLite creates its -wal and -shm files with the
 * database file's permissions, so they follow. Those an older start left behind are tightened too.
 */
export function ensurePrivateSqliteFiles(file: string): void {
  ensurePrivateFile(file);
  for (const suffix of ['-wal', '-shm', '-journal']) {
    if (existsSync(file + suffix)) chmodSync(file + suffix, PRIVATE_FILE_MODE);
  }
}
