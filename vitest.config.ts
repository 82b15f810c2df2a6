import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two workers even on two cores: most suites wait on child processes, PostgreSQL or a
    // browser, and one worker put the CI run near its 15-minute limit (829–879 s; 682 s with two).
    maxWorkers: Math.max(2, Math.min(4, availableParallelism() - 1)),
    // Isolates HOME / TMPDIR / XDG_* into a run-owned temp dir, checks ../shared under CI, builds
    // dist/ once; its teardown checks nothing was written outside the run's own dirs.
    globalSetup: ['src/test-utils/global-setup.ts'],
    reporters: ['default', './src/test-utils/shared-reporter.ts'],
  },
});
