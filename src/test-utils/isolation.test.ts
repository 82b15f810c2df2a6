import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI } from './cli.js';
import { newEntries, snapshotDirs, watchedDirs } from './isolation.js';
import { tempDir } from './temp-dir.js';

const RUN_DIR = /[\\/]contextfold-test-run-[^\\/]+[\\/]/;

describe('test run isolation (global setup)', () => {
  it('this worker sees HOME, TMPDIR and XDG_* inside the run-owned directory', () => {
    for (const v of [
      'HOME',
      'TMPDIR',
      'XDG_CACHE_HOME',
      'XDG_CONFIG_HOME',
      'XDG_DATA_HOME',
      'XDG_STATE_HOME',
      'npm_config_cache',
    ]) {
      expect(process.env[v], v).toMatch(RUN_DIR);
    }
    expect(homedir()).toMatch(RUN_DIR);
    expect(tmpdir()).toMatch(RUN_DIR);
    expect(process.env.CONTEXTFOLD_CACHE_DIR).toBeUndefined();
  });

  it('a spawned process inherits it, and a CLI fold writes nothing to the home', () => {
    const home = spawnSync(
      process.execPath,
      ['-e', 'process.stdout.write(require("os").homedir())'],
      {
        encoding: 'utf8',
      },
    );
    expect(`${home.stdout}/`).toMatch(RUN_DIR);
    const cache = process.env.XDG_CACHE_HOME!;
    const count = () => (existsSync(cache) ? readdirSync(cache, { recursive: true }).length : 0);
    const before = count();
    const dir = join(tempDir().dir, '.contextfold');
    const r = spawnSync(
      process.execPath,
      [CLI, '--dir', dir, 'fold', '1', 'PostgreSQL on port 5433'],
      {
        encoding: 'utf8',
      },
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // The ranked analysis lives in the store's derived index, not in a cache under the home.
    expect(count()).toBe(before);
  });
});

describe('the leak check of the teardown', () => {
  it('reports what appeared in a watched directory, except the run dir, and handles missing ones', () => {
    const home = tempDir().dir;
    const tmp = tempDir().dir;
    mkdirSync(join(home, '.cache'));
    writeFileSync(join(home, '.bashrc'), '');
    const before = snapshotDirs(watchedDirs(home, tmp));
    expect(newEntries(before)).toEqual([]);
    const runDir = join(tmp, 'contextfold-test-run-x');
    mkdirSync(runDir);
    mkdirSync(join(home, '.cache', 'contextfold'));
    mkdirSync(join(home, '.config'));
    writeFileSync(join(tmp, 'cf-leak'), '');
    // Other test runs going on at the same time clean up after themselves.
    mkdirSync(join(tmp, 'contextfold-test-run-other'));
    mkdirSync(join(tmp, 'V1StGXR8_Z5jdHi6B-myT'));
    mkdirSync(join(home, 'V1StGXR8_Z5jdHi6B-myT'));
    expect(newEntries(before, [runDir], tmp)).toEqual(
      [
        join(home, '.cache', 'contextfold'),
        join(home, '.config'),
        join(home, 'V1StGXR8_Z5jdHi6B-myT'),
        join(tmp, 'cf-leak'),
      ].sort(),
    );
  });
});
