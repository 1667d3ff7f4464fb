/**
 * Wrong passwords take the same time whoever the identifier belongs to. An unknown identifier costs a decoy
 * argon2id verification, an argon2id user a real one, and a user with an imported hash its own algorithm beside
 * a decoy (crypto/passwords.ts); some imported algorithms (bcrypt at cost 12, PBKDF2 at 600,000 rounds) still
 * take longer than argon2id. So every password check of a connection records how long it took, and a failure
 * is answered no sooner than the slowest of that connection's last checks: which kind of user failed, or
 * whether one exists at all, does not show in the time. Successes are never delayed.
 * What is recorded is the check's own work, not its wait for a hash slot (crypto/passwords.ts HashWork): the
 * wait is the same for every kind of identifier, and counting it let one burst of logins hold every failure of
 * the connection for up to two seconds for the next 32 checks.
 */
const WINDOW = 32;
/** A stall (a pause of the whole process) must not slow every failure for long. */
const MAX_FLOOR_MS = 2000;
const MAX_CONNECTIONS = 10_000;

const recent = new Map<string, number[]>();

/** Records how long a password check (right or wrong) on `connectionId` took. */
export function recordPasswordCheck(connectionId: string, milliseconds: number): void {
  let durations = recent.get(connectionId);
  if (!durations) {
    if (recent.size >= MAX_CONNECTIONS) recent.clear();
    durations = [];
    recent.set(connectionId, durations);
  }
  durations.push(Math.min(milliseconds, MAX_FLOOR_MS));
  if (durations.length > WINDOW) durations.shift();
}

/** Waits until a failed check that started at `startedAt` (performance.now()) has taken as long as the slowest recent one. */
export async function answerFailureInEqualTime(connectionId: string, startedAt: number): Promise<void> {
  const durations = recent.get(connectionId);
  if (!durations || durations.length === 0) return;
  const floor = Math.max(...durations);
  const wait = startedAt + floor - performance.now();
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
}
