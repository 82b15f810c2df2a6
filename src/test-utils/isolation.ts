import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where a directory's entries were, to compare after the run. */
export type DirSnapshot = Map<string, Set<string>>;

/**
 * The directories a test run must not add anything to: the system temp dir, and in the home
 * directory its top level and the usual cache/config/data/state homes (with contextfold's own
 * default cache). Listing them is cheap; a full walk of a home directory is not.
 */
export function watchedDirs(realHome: string, realTmp: string): string[] {
  return [
    realTmp,
    realHome,
    join(realHome, '.cache'),
    join(realHome, '.cache', 'contextfold'),
    join(realHome, '.config'),
    join(realHome, '.local', 'share'),
    join(realHome, '.local', 'state'),
  ];
}

/** The entries of each directory (a missing directory has none). */
export function snapshotDirs(dirs: string[]): DirSnapshot {
  const snap: DirSnapshot = new Map();
  for (const d of dirs) snap.set(d, new Set(existsSync(d) ? readdirSync(d) : []));
  return snap;
}

/**
 * Temp entries of other test runs going on at the same time, which remove them themselves:
 * their run directories and vitest's own temp directory (a 21-character nanoid).
 */
const CONCURRENT_RUN = /^(contextfold-test-run-.+|[A-Za-z0-9_-]{21})$/;

/**
 * Paths present now that were not in `before`, except `ignore` (this run's own directories)
 * and, in the temp dir `tmp`, those of concurrent test runs.
 */
export function newEntries(before: DirSnapshot, ignore: string[] = [], tmp?: string): string[] {
  const found: string[] = [];
  for (const [dir, names] of before) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (names.has(name) || ignore.includes(path)) continue;
      if (dir === tmp && CONCURRENT_RUN.test(name)) continue;
      found.push(path);
    }
  }
  return found.sort();
}

/** The run-owned directories that stand in for the real home and temp dirs. */
export interface IsolatedRun {
  runDir: string;
  realHome: string;
  realTmp: string;
  /** The watched directories' entries before the run. */
  before: DirSnapshot;
}

/** The environment a run's tests (and every CLI they spawn) see. */
export function isolatedEnv(runDir: string): Record<string, string> {
  const home = join(runDir, 'home');
  return {
    HOME: home,
    TMPDIR: join(runDir, 'tmp'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    // npm run by tests (npm pack) writes its logs and cache here, not to the real ~/.npm
    // (`npm test` exports the real one to its children).
    npm_config_cache: join(home, '.npm'),
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    // python3 (the corpus generator check) would leave __pycache__ beside its script.
    PYTHONDONTWRITEBYTECODE: '1',
  };
}

/**
 * Moves the home, temp, XDG and npm cache directories of this process (and so of every worker
 * and CLI it starts) into one run-owned temporary directory, and remembers what the real ones
 * held. `CONTEXTFOLD_CACHE_DIR` is removed so the default cache path (now inside the run) is
 * what tests exercise.
 */
export function isolateRun(env: NodeJS.ProcessEnv = process.env): IsolatedRun {
  const realHome = homedir();
  const realTmp = tmpdir();
  const before = snapshotDirs(watchedDirs(realHome, realTmp));
  const runDir = mkdtempSync(join(realTmp, 'contextfold-test-run-'));
  const vars = isolatedEnv(runDir);
  for (const dir of [vars.HOME!, vars.TMPDIR!, vars.XDG_CACHE_HOME!]) {
    mkdirSync(dir, { recursive: true });
  }
  Object.assign(env, vars);
  delete env.CONTEXTFOLD_CACHE_DIR;
  // Tests run inside a Claude Code session would otherwise put every hook store in its project.
  delete env.CLAUDE_PROJECT_DIR;
  return { runDir, realHome, realTmp, before };
}

/**
 * Removes the run's directory and returns what appeared outside it in the watched directories
 * (`ignore`: other directories of this run, e.g. vitest's).
 */
export function endIsolatedRun(run: IsolatedRun, ignore: string[] = []): string[] {
  rmSync(run.runDir, { recursive: true, force: true });
  return newEntries(run.before, [run.runDir, ...ignore], run.realTmp);
}
