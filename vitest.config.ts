import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Isolates HOME / TMPDIR / XDG_* into a run-owned temp dir, checks ../shared under CI, builds
    // dist/ once; its teardown checks nothing was written outside the run's own dirs.
    globalSetup: ['src/test-utils/global-setup.ts'],
    reporters: ['default', './src/test-utils/shared-reporter.ts'],
  },
});
