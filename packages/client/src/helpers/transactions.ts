/**
 * The transaction store (library rule 2): `authorize` keeps `{state, nonce, appState}` under the state, and
 * `parseHash` reads it back once and deletes it. localStorage first (as the contract says), a cookie when
 * storage is unavailable (private modes), memory as the last resort.
 */
export interface Transaction {
  state: string;
  nonce?: string;
  appState?: unknown;
  lastUsedConnection?: string;
  /** Epoch ms after which the entry is ignored. */
  expiresAt: number;
}

const PREFIX = 'svc.auth.';
const memory = new Map<string, string>();

function local(): Storage | undefined {
  try {
    const storage = window.localStorage;
    const probe = `${PREFIX}probe`;
    storage.setItem(probe, '1');
    storage.removeItem(probe);
    return storage;
  } catch {
    return undefined;
  }
}

function write(key: string, value: string, minutes: number): void {
  const storage = local();
  if (storage) return storage.setItem(key, value);
  try {
    document.cookie = `${encodeURIComponent(key)}=${encodeURIComponent(value)}; path=/; max-age=${minutes * 60}${location.protocol === 'https:' ? '; secure; samesite=none' : ''}`;
    if (document.cookie.includes(encodeURIComponent(key))) return;
  } catch {
    // No cookies either (sandboxed frame): keep it in memory.
  }
  memory.set(key, value);
}

function read(key: string): string | undefined {
  const storage = local();
  const fromStorage = storage?.getItem(key);
  if (fromStorage) return fromStorage;
  try {
    const name = `${encodeURIComponent(key)}=`;
    const cookie = document.cookie.split('; ').find((c) => c.startsWith(name));
    if (cookie) return decodeURIComponent(cookie.slice(name.length));
  } catch {
    // fall through to memory
  }
  return memory.get(key);
}

function remove(key: string): void {
  local()?.removeItem(key);
  try {
    document.cookie = `${encodeURIComponent(key)}=; path=/; max-age=0`;
  } catch {
    // nothing to remove
  }
  memory.delete(key);
}

export function storeTransaction(transaction: Omit<Transaction, 'expiresAt'>, minutes = 30): void {
  write(PREFIX + transaction.state, JSON.stringify({ ...transaction, expiresAt: Date.now() + minutes * 60_000 }), minutes);
}

/** Reads and deletes the transaction for `state`; undefined if there is none or it expired. */
export function takeTransaction(state: string | undefined): Transaction | undefined {
  if (!state) return undefined;
  const raw = read(PREFIX + state);
  remove(PREFIX + state);
  if (!raw) return undefined;
  try {
    const transaction = JSON.parse(raw) as Transaction;
    return transaction.expiresAt > Date.now() ? transaction : undefined;
  } catch {
    return undefined;
  }
}

/** Key-value store for the cross-origin verifier (auth0-js' key format, 15 minutes). */
export function storeValue(key: string, value: string, minutes: number): void {
  write(key, JSON.stringify({ value, expiresAt: Date.now() + minutes * 60_000 }), minutes);
}

export function takeValue(key: string): string | undefined {
  const raw = read(key);
  remove(key);
  if (!raw) return undefined;
  try {
    const entry = JSON.parse(raw) as { value: string; expiresAt: number };
    return entry.expiresAt > Date.now() ? entry.value : undefined;
  } catch {
    return undefined;
  }
}

/** Reads a value kept by `storeValue` without consuming it (the SSO data is read at every getSSOData). */
export function readValue(key: string): string | undefined {
  const raw = read(key);
  if (!raw) return undefined;
  try {
    const entry = JSON.parse(raw) as { value: string; expiresAt: number };
    return entry.expiresAt > Date.now() ? entry.value : undefined;
  } catch {
    return undefined;
  }
}
