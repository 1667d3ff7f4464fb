import { defineConfig } from 'vitest/config';

/** The packages' own tests: servers started in-process, each file closing what it opened. */
const PACKAGE_TESTS = ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'];
/** Compatibility, end-to-end, fuzz and soak suites: third-party clients, browsers, child processes. */
const SUITE_TESTS = ['test/**/*.test.ts', 'bench/**/*.test.ts'];

export default defineConfig({
  test: {
    // Each file boots real servers and databases; forks keep native modules (better-sqlite3) isolated.
    pool: 'forks',
    // Two workers for two cores: a third was no faster on 15 files with a fresh process per file (383 s vs 375 s),
    // and its gain with shared processes was within the noise of a loaded box (the suite is mostly CPU-bound).
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
    projects: [
      {
        extends: true,
        test: {
          name: 'packages',
          include: PACKAGE_TESTS,
          // A worker runs its files one after another in one process, importing the server's modules once:
          // with a fresh process per file, importing them took about 30% of the workers' time, and every file
          // started its first server cold. The files restore what they change of the process (environment,
          // globals) and close the servers, browsers and databases they open.
          isolate: false,
        },
      },
      {
        extends: true,
        // A fresh process per file: these load third-party clients and frameworks and change process settings.
        test: { name: 'suites', include: SUITE_TESTS },
      },
    ],
  },
});
