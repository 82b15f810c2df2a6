import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The third-party data the interop suites read (vectors, real sessions, the eval): `../shared`
 * beside the repository, or `$CONTEXTFOLD_SHARED`. It is never copied into the repository.
 */
export const SHARED_DIR = process.env.CONTEXTFOLD_SHARED
  ? resolve(process.env.CONTEXTFOLD_SHARED)
  : fileURLToPath(new URL('../../../shared/', import.meta.url));

/** True when the shared data is present. */
export const HAS_SHARED = existsSync(join(SHARED_DIR, 'vectors'));

/**
 * Title prefix of the skipped test that stands in for a suite needing the shared data; the
 * shared-data reporter lists them once at the end of the run.
 */
export const NEEDS_SHARED = 'needs ../shared:';

/** True under CI (`CI=true` or `CI=1`), where every suite must run. */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['1', 'true'].includes((env.CI ?? '').toLowerCase());
}
