import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    // Each file boots real servers and databases; forks keep native modules (better-sqlite3) isolated.
    pool: 'forks',
    maxWorkers: 2,
    // Bounds for a test that hangs, not expectations of speed: the machine may be a shared 2-core box under
    // heavy load, where a multi-step browser test takes many times its usual few seconds. A test waits for
    // conditions (page elements, polled states), never for a time, so these bounds only decide how long a real
    // failure takes to report.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll waits for its condition; vitest's default bound (1 s) turns a slow machine into a failure.
    expect: { poll: { timeout: 30_000 } },
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
