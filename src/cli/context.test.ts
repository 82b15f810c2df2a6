import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, runCliInProcess, runCliProcess } from '../test-utils/cli.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { reportError } from './context.js';

const READ_COMMANDS: string[][] = [
  ['validate'],
  ['status'],
  ['recall', 'port'],
  ['scan', 'port'],
  ['hydrate', '1'],
  ['evict', '1'],
  ['compact'],
  ['reindex'],
  ['repair'],
  ['export', '--to', 'copy'],
  ['pack'],
  ['mcp'],
];

describe('a directory without a store', () => {
  it.each(READ_COMMANDS)('%s says so in one line and exits 1, writing nothing', async (...args) => {
    const root = tempDir().dir;
    const dir = join(root, 'nonexistent', '.contextfold');
    const r = await runCliInProcess(['--dir', dir, ...args]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `contextfold: StoreNotFoundError: no store at ${dir}: run contextfold fold … or contextfold import … to create one, or pass --dir DIR\n`,
    );
    expect(existsSync(join(root, 'nonexistent'))).toBe(false);
  });

  it('the root help names each of them among the commands that need a store', async () => {
    const help = (await runCliInProcess(['--help'])).stdout.replace(/\s+/g, ' ');
    const list = /Read commands \(([^)]*)\) need an existing store/.exec(help)?.[1]?.split(', ');
    expect(list?.sort()).toEqual(READ_COMMANDS.map((c) => c[0]).sort());
  });

  it('an empty directory is not a store either; --json gives one error object', async () => {
    const dir = join(tempDir().dir, 'empty');
    mkdirSync(dir);
    const r = await runCliInProcess(['--dir', dir, '--json', 'validate']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({
      error: 'StoreNotFoundError',
      code: 'STORE_NOT_FOUND',
      message: expect.stringMatching(/^no store at /),
      path: dir,
    });
  });

  it('fold creates the store, after which read commands work', async () => {
    const dir = join(tempDir().dir, 'new', '.contextfold');
    expect(
      (await runCliInProcess(['--dir', dir, 'fold', '1', 'PostgreSQL on port 5433'])).code,
    ).toBe(0);
    const v = await runCliInProcess(['--dir', dir, 'validate']);
    expect(v).toMatchObject({ code: 0, stdout: 'ok: 1 node(s) verified, no problems\n' });
  });

  it('fold without --file says the summary became the payload (and help says so too)', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const r = await runCliInProcess(['--dir', dir, 'fold', '12', 'PostgreSQL on port 5433']);
    expect(r.stdout).toContain('note: no --file, so the summary is the archived payload');
    const h = await runCliInProcess(['--dir', dir, '--json', 'hydrate', '12']);
    expect(JSON.parse(h.stdout).content).toBe('PostgreSQL on port 5433');
    const help = await runCliInProcess(['fold', '--help']);
    expect(help.stdout).toContain(
      "Without --file, the SUMMARY itself is archived as the turn's payload",
    );
  });

  it('--limit must be at least 1', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    await runCliInProcess(['--dir', dir, 'fold', '1', 'PostgreSQL port']);
    for (const n of ['0', '-1', 'x']) {
      const r = await runCliInProcess(['--dir', dir, 'recall', 'port', '--limit', n]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `contextfold: UsageError: --limit must be a positive integer (1 or more), got '${n}'\n`,
      );
    }
    const one = await runCliInProcess(['--dir', dir, '--json', 'recall', 'port', '--limit', '1']);
    expect(JSON.parse(one.stdout).candidates).toHaveLength(1);
  });
});

describe('a --store URL of another scheme', () => {
  it.each([
    ['mysql://cf:hunter2@db/contextfold', 'mysql:'],
    ['sqlite:///x.db', 'sqlite:'],
    ['http://example.com/store', 'http:'],
  ])('%s is refused in one line, creating nothing where it runs', (url, scheme) => {
    const cwd = tempDir().dir;
    const r = runCliProcess(['--store', url, 'fold', '1', 'PostgreSQL on port 5433'], { cwd });
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toBe(
      `contextfold: UsageError: unsupported store URL scheme '${scheme}': give a directory or a postgres:// URL\n`,
    );
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('is refused from CONTEXTFOLD_STORE too, as one JSON object with --json', () => {
    const cwd = tempDir().dir;
    const before = process.env.CONTEXTFOLD_STORE;
    process.env.CONTEXTFOLD_STORE = 'mysql://db/contextfold';
    try {
      const r = runCliProcess(['--json', 'status'], { cwd });
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout)).toMatchObject({ code: 'USAGE' });
      expect(readdirSync(cwd)).toEqual([]);
    } finally {
      if (before === undefined) delete process.env.CONTEXTFOLD_STORE;
      else process.env.CONTEXTFOLD_STORE = before;
    }
  });
});

describe('a --dir that is a file', () => {
  const turns = '{"step_id":0,"role":"user","content":"PostgreSQL on port 5433?"}\n';
  const runs: [string, (file: string, root: string) => string[]][] = [
    ['fold', (f) => ['--dir', f, 'fold', '1', 'PostgreSQL on port 5433']],
    ['session', (f, root) => ['--dir', f, 'session', join(root, 'turns.jsonl')]],
    ['import', (f, root) => ['--dir', f, 'import', join(root, 'turns.jsonl'), '--format', 'turns']],
    ['mcp --create', (f) => ['--dir', f, 'mcp', '--create']],
    ['proxy', (f) => ['--dir', f, 'proxy', '--upstream', 'http://127.0.0.1:1', '--port', '0']],
  ];

  it.each(runs)(
    '%s: one usage line before anything starts, the file untouched',
    async (_, args) => {
      const root = tempDir().dir;
      const file = join(root, 'store-file');
      writeFileSync(file, 'mine');
      writeFileSync(join(root, 'turns.jsonl'), turns);
      for (const dir of [file, join(file, '.contextfold')]) {
        const r = await runCliInProcess(args(dir, root));
        expect(r).toMatchObject({
          code: 1,
          stdout: '',
          stderr: `contextfold: UsageError: store directory ${dir} is (or is under) a file: choose another --dir\n`,
        });
      }
      expect(readFileSync(file, 'utf8')).toBe('mine');
    },
  );
});

describe('--dir and --store on one command line', () => {
  it('both are a usage error; an empty --dir is one too (not the working directory)', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const both = await runCliInProcess(['--dir', dir, '--store', dir, 'fold', '1', 'x']);
    expect(both).toMatchObject({
      code: 1,
      stderr:
        'contextfold: UsageError: give --store or --dir, not both (they name the same thing)\n',
    });
    const cwd = tempDir().dir;
    const empty = runCliProcess(['--dir', '', '--json', 'fold', '1', 'x'], { cwd });
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.stdout)).toMatchObject({
      code: 'USAGE',
      message: '--dir needs a directory (it was empty)',
    });
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });
});

describe("a --dir inside a store's cold_nodes", () => {
  it('is refused in one line naming the store, which still validates', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    expect(
      (await runCliInProcess(['--dir', dir, 'fold', '1', 'PostgreSQL on port 5433'])).code,
    ).toBe(0);
    for (const inner of [join(dir, 'cold_nodes'), join(dir, 'cold_nodes', 'x', '.contextfold')]) {
      const r = await runCliInProcess(['--dir', inner, 'fold', '2', 'x']);
      expect(r).toMatchObject({
        code: 1,
        stderr: `contextfold: UsageError: store directory ${inner} is inside the cold_nodes of the store ${dir}: pass --dir ${dir}\n`,
      });
    }
    const v = await runCliInProcess(['--dir', dir, 'validate']);
    expect(v).toMatchObject({ code: 0, stdout: 'ok: 1 node(s) verified, no problems\n' });
  });

  it('a store that is itself named cold_nodes, in no store, is an ordinary store', async () => {
    const dir = join(tempDir().dir, 'cold_nodes');
    expect((await runCliInProcess(['--dir', dir, 'fold', '1', 'x'])).code).toBe(0);
    expect((await runCliInProcess(['--dir', dir, 'validate'])).code).toBe(0);
  });
});

describe('a TMPDIR that does not exist', () => {
  it('demo says so in one line and exits 1', () => {
    const missing = join(tempDir().dir, 'missing');
    const r = spawnSync(process.execPath, [CLI, 'demo'], {
      env: { ...process.env, TMPDIR: missing },
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `contextfold: UsageError: cannot create a temporary directory under ${missing} (ENOENT): set TMPDIR to a writable directory\n`,
    );
  });
});

describe('a full disk', () => {
  it('is one line that says so, exit 1, no stack and no "please report" (the hook shows it in Claude Code)', () => {
    const lines: string[] = [];
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'write',
    });
    expect(reportError(enospc, false, (t) => lines.push(t))).toBe(1);
    const sqlite = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    expect(reportError(sqlite, false, (t) => lines.push(t))).toBe(1);
    expect(lines).toEqual([
      'contextfold: UsageError: no space left on device, write (ENOSPC): the disk is full; free some space, then run again\n',
      'contextfold: UsageError: database or disk is full (SQLITE_FULL): the disk is full; free some space, then run again\n',
    ]);
  });

  it('is found as the cause of another error (an index file that could not be created)', () => {
    const lines: string[] = [];
    const sqlite = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    const unusable = new Error('/s/index-2-ab.sqlite.build-7 is not a usable index', {
      cause: sqlite,
    });
    unusable.name = 'IndexUnusable';
    expect(reportError(unusable, false, (t) => lines.push(t))).toBe(1);
    expect(lines).toEqual([
      'contextfold: UsageError: database or disk is full (SQLITE_FULL): the disk is full; free some space, then run again\n',
    ]);
  });
});
