import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { endIsolatedRun, isolateRun } from './isolation.js';
import { type PgCluster, startPgCluster } from './pg-cluster.js';
import { HAS_SHARED, isCi, SHARED_DIR } from './shared-location.js';

/** The leak check fails the run under CI, unless `CONTEXTFOLD_TEST_FS_CHECK` says `warn`. */
function fsCheckFails(): boolean {
  const mode = process.env.CONTEXTFOLD_TEST_FS_CHECK;
  return mode === 'fail' || (mode !== 'warn' && isCi());
}

/**
 * Builds dist/ (the same steps as `npm run build`: the library, the CLI's bundle, the
 * inspector's browser client, its static files), so tests that spawn the real CLI (`node dist/cli/bin.js`) or load the web
 * app run the code under test. A type error fails the run.
 */
function build(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const tsc = 'node_modules/typescript/bin/tsc';
  const run = (args: string[]): void => {
    execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  };
  run([tsc, '-p', 'tsconfig.build.json']);
  run(['scripts/bundle-cli.mjs']);
  run([tsc, '-p', 'src/inspect/client/tsconfig.json']);
  run(['scripts/copy-inspect-static.mjs']);
}

/**
 * Runs once, in the main vitest process, before any test file:
 * - under CI, fails the run when the shared data is missing (CI runs every suite);
 * - isolates the run: HOME, TMPDIR, XDG_* and npm's cache point into one run-owned temporary
 *   directory, inherited by every worker and every CLI a test spawns, and removed at the end;
 * - builds dist/ once (unless `CONTEXTFOLD_SKIP_BUILD=1`).
 * The teardown checks that nothing new appeared in the real home or temp directory. Under CI
 * (a machine of its own) that fails the run; elsewhere other processes may write there too, so
 * it is a warning listing what appeared (`CONTEXTFOLD_TEST_FS_CHECK=fail|warn` overrides).
 */
/**
 * Starts the run's PostgreSQL cluster (unless `CONTEXTFOLD_TEST_PG_URL` names a server already)
 * and tells the workers through the environment: `CONTEXTFOLD_TEST_PG_URL`, or why there is
 * none in `CONTEXTFOLD_TEST_PG_SKIP` (the PostgreSQL suites fail on it under CI, skip otherwise).
 * `CONTEXTFOLD_TEST_PG=off` starts none (to see those suites skip, or fail under CI).
 */
async function startPg(realTmp: string): Promise<PgCluster | null> {
  if (process.env.CONTEXTFOLD_TEST_PG_URL) return null;
  if (process.env.CONTEXTFOLD_TEST_PG === 'off') {
    process.env.CONTEXTFOLD_TEST_PG_SKIP = 'no PostgreSQL server: CONTEXTFOLD_TEST_PG=off';
    return null;
  }
  // Directly in the system temp dir: a server running as another user (as root, `postgres`)
  // must be able to reach it. Removed at the end of the run.
  const dir = mkdtempSync(join(realTmp, 'contextfold-test-run-pg-'));
  try {
    const cluster = await startPgCluster(dir);
    process.env.CONTEXTFOLD_TEST_PG_URL = cluster.url;
    return cluster;
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    const why = (e as Error).message.split('\n')[0];
    process.env.CONTEXTFOLD_TEST_PG_SKIP = `the throwaway PostgreSQL cluster did not start: ${why}`;
    return null;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  if (isCi() && !HAS_SHARED) {
    throw new Error(
      `CI=true but the shared data is absent at ${SHARED_DIR}: CI runs every suite; lay ../shared beside the repository or set CONTEXTFOLD_SHARED=path`,
    );
  }
  const run = isolateRun();
  // The real temp dir, for a test's own throwaway server (one running as another user cannot
  // reach the run's private temp dir); such a test removes its directory before the end.
  process.env.CONTEXTFOLD_TEST_REAL_TMP = run.realTmp;
  // A hook CLI run would start a hook server that outlives its test (and the run): only the
  // hook server's own tests start one, and stop it.
  process.env.CONTEXTFOLD_HOOK_SERVER = '0';
  if (process.env.CONTEXTFOLD_SKIP_BUILD !== '1') build();
  const cluster = await startPg(run.realTmp);
  return () => {
    cluster?.stop();
    // vitest's own temp dir (made before this setup ran; vitest removes it after this teardown).
    const leaked = endIsolatedRun(run, [project.tmpDir]);
    if (leaked.length === 0) return;
    const list = `${leaked.slice(0, 8).join(', ')}${leaked.length > 8 ? ` and ${leaked.length - 8} more` : ''}`;
    if (fsCheckFails()) {
      // A teardown error does not change vitest's exit code: set it, and say why.
      console.error(
        `[contextfold tests] FAIL: new in the real HOME or system temp dir during this run (a test writing outside its temp dir, or another process; CONTEXTFOLD_TEST_FS_CHECK=warn on a shared machine): ${list}`,
      );
      process.exitCode = 1;
      return;
    }
    console.warn(
      `[contextfold tests] new in the real HOME or system temp dir during this run (maybe other processes; under CI=true this fails the run): ${list}`,
    );
  };
}
