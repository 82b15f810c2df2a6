// A store directory that cannot be created (its parent is not writable) is the user's to fix:
// every command that would create one says so in one line, exit 1, never an internal error.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCliInProcess, runCliProcess } from '../test-utils/cli.js';
import { tempDir } from '../test-utils/temp-dir.js';

/** A new directory nobody can write, even root (chattr +i), with its undo; null if impossible. */
function lockedDir(): { dir: string; undo: () => void } | null {
  const dir = join(tempDir().dir, 'locked');
  mkdirSync(dir);
  if (process.getuid?.() === 0) {
    if (spawnSync('chattr', ['+i', dir]).status !== 0) return null;
    return { dir, undo: () => spawnSync('chattr', ['-i', dir]) };
  }
  chmodSync(dir, 0o555);
  return { dir, undo: () => chmodSync(dir, 0o755) };
}

/** Exit 1, nothing on stdout, one stderr line saying the store is not writable, nothing made. */
function expectRefusedInOneLine(
  r: { code: number | null; stdout: string; stderr: string },
  locked: string,
): void {
  expect(r).toMatchObject({ code: 1, stdout: '' });
  expect(r.stderr).toMatch(
    /^contextfold: UsageError: store directory is not writable \(E[A-Z]+\): /,
  );
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(readdirSync(locked)).toEqual([]);
}

const TURNS = `${[
  { step_id: 0, role: 'user', content: 'Set up PostgreSQL.' },
  { step_id: 1, role: 'assistant', content: 'PostgreSQL listening on port 5433' },
]
  .map((t) => JSON.stringify(t))
  .join('\n')}\n`;

describe('a store directory under a directory that is not writable', () => {
  it('contextfold session says so in one line (it was an internal error from mkdir)', async (ctx) => {
    const locked = lockedDir();
    if (!locked) return ctx.skip('cannot make a directory read-only here (no chattr as root)');
    try {
      const turns = join(tempDir().dir, 'turns.jsonl');
      writeFileSync(turns, TURNS);
      const store = join(locked.dir, 'new', '.contextfold');
      const r = await runCliInProcess(['--dir', store, 'session', turns]);
      expectRefusedInOneLine(r, locked.dir);
    } finally {
      locked.undo();
    }
  });

  it('the Claude Code hook says so in one line, in its systemMessage (it was an internal error from mkdir)', (ctx) => {
    const locked = lockedDir();
    if (!locked) return ctx.skip('cannot make a directory read-only here (no chattr as root)');
    try {
      const work = tempDir().dir;
      writeFileSync(join(work, 't.jsonl'), '');
      const input = JSON.stringify({
        session_id: 's1',
        transcript_path: join(work, 't.jsonl'),
        cwd: work,
        prompt: 'port?',
      });
      const r = runCliProcess(
        ['--dir', join(locked.dir, '.contextfold'), 'hook', 'user-prompt-submit'],
        {
          cwd: work,
          input,
        },
      );
      // A runtime failure once the hook's input is valid: exit 0, so that Claude Code reads the
      // JSON and shows the user its systemMessage (stderr is shown only in verbose mode).
      expect(r.code).toBe(0);
      const line =
        /^contextfold: UsageError \(USAGE\): store directory is not writable \(E[A-Z]+\): /;
      expect(JSON.parse(r.stdout)).toEqual({ systemMessage: expect.stringMatching(line) });
      expect(r.stderr).toMatch(line);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(readdirSync(locked.dir)).toEqual([]);
    } finally {
      locked.undo();
    }
  });
});

describe('contextfold proxy on a store it cannot write', () => {
  // Before, it listened and printed where to point clients; every call then failed with a 500.
  const proxyArgs = (dir: string) => [
    '--dir',
    dir,
    'proxy',
    '--upstream',
    'http://127.0.0.1:9',
    '--port',
    '0',
  ];

  it('refuses to start, in one line, exit 1 (a directory not writable)', (ctx) => {
    const locked = lockedDir();
    if (!locked) return ctx.skip('cannot make a directory read-only here (no chattr as root)');
    try {
      const r = runCliProcess(proxyArgs(join(locked.dir, 'new', '.contextfold')), {
        timeoutMs: 20_000,
      });
      expectRefusedInOneLine(r, locked.dir);
    } finally {
      locked.undo();
    }
  });

  it.skipIf(process.platform !== 'linux' || !existsSync('/proc/self'))(
    'refuses to start, in one line, exit 1 (--dir /proc/…)',
    () => {
      const r = runCliProcess(proxyArgs('/proc/cf-probe/.contextfold'), { timeoutMs: 20_000 });
      expect(r).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toMatch(/^contextfold: UsageError: store directory is not writable \(/);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    },
  );
});

describe('a directory under a parent that takes no new directories (/proc)', () => {
  // Node 20's recursive mkdir never returned there (100% CPU): each run is killed after 20 s,
  // which fails the test (code -1) instead of hanging the suite.
  const noProc = process.platform !== 'linux' || !existsSync('/proc/self');
  const oneLine = (r: { code: number; stdout: string; stderr: string }) => {
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toMatch(/^contextfold: UsageError: .*\(ENOENT\)/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  };

  it.skipIf(noProc)('contextfold fold --dir /proc/… says so in one line, exit 1', () => {
    const r = runCliProcess(['--dir', '/proc/cf-probe/.contextfold', 'fold', '1', 'summary'], {
      timeoutMs: 20_000,
    });
    oneLine(r);
    expect(r.stderr).toMatch(/store directory is not writable/);
  });

  it.skipIf(noProc)('contextfold export --to /proc/… says so in one line, exit 1', () => {
    const from = join(tempDir().dir, '.contextfold');
    expect(runCliProcess(['--dir', from, 'fold', '1', 'a summary']).code).toBe(0);
    oneLine(
      runCliProcess(['--dir', from, 'export', '--to', '/proc/cf-probe/x/.contextfold'], {
        timeoutMs: 20_000,
      }),
    );
  });

  it.skipIf(noProc)(
    'contextfold install claude-code --user (settings under /proc) says so in one line',
    () => {
      const r = spawnSync(
        process.execPath,
        [CLI, 'install', 'claude-code', '--user', '--command', 'contextfold'],
        {
          env: { ...process.env, CLAUDE_CONFIG_DIR: '/proc/cf-probe/claude' },
          encoding: 'utf8',
          timeout: 20_000,
        },
      );
      oneLine({ code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr });
      expect(r.stderr).toMatch(/cannot write \/proc\/cf-probe\/claude\/settings\.json/);
    },
  );
});
