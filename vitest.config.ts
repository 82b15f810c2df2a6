import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// Tests (and the CLIs they spawn) never write into the real ~/.cache.
process.env.CONTEXTFOLD_CACHE_DIR ??= mkdtempSync(join(tmpdir(), 'contextfold-test-cache-'));

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['src/test-utils/global-setup.ts'],
  },
});
