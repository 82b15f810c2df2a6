import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../protocol/canonical-json.js';
import { PgCopySource } from '../store/pg/pg-copy-source.js';
import { PgNodes } from '../store/pg/pg-nodes.js';
import { PgStore } from '../store/pg/pg-store.js';
import { CLI, runCliInProcess, runCliProcess } from '../test-utils/cli.js';
import { describePg, PG_URL, pgStoreUrl } from '../test-utils/pg.js';
import { HAS_SHARED, itShared, sharedPath } from '../test-utils/shared.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';
import { PAGE_BYTES, transferStore } from './store-transfer.js';

const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

describePg('export and import-store between a directory and PostgreSQL', () => {
  itShared(
    "the reference engine's own store goes into PostgreSQL and comes back byte for byte",
    async () => {
      const work = tempDir().dir;
      cpSync(sharedPath('vectors', 'reference-store'), join(work, 'ref'), { recursive: true });
      const original = join(work, 'ref', '.contextfold');
      const url = pgStoreUrl('refstore');
      const imp = await runCliInProcess(['--store', url, '--json', 'import-store', original]);
      expect(imp.code, imp.stdout + imp.stderr).toBe(0);
      const nodes = readdirSync(join(original, 'cold_nodes')).length;
      expect(json(imp.stdout)).toMatchObject({ nodes, evictions: 1 });
      // Served from the database: verified pages, the evicted flag, a clean validate.
      const db = await ContextFold.open({ store: url, tokenizer: 'reference', mustExist: true });
      expect((await db.hydrate(137)).verified).toBe(true);
      expect((await db.entry(137))?.evicted).toBe(true);
      expect((await db.validate()).ok).toBe(true);
      await db.close();
      const out = join(work, 'out', '.contextfold');
      const exp = await runCliInProcess(['--store', url, '--json', 'export', '--to', out]);
      expect(exp.code, exp.stdout + exp.stderr).toBe(0);
      for (const name of readdirSync(join(original, 'cold_nodes'))) {
        const a = readFileSync(join(original, 'cold_nodes', name));
        const b = readFileSync(join(out, 'cold_nodes', name));
        expect(b.equals(a), name).toBe(true);
      }
      expect(readFileSync(join(out, 'eviction_log.json'), 'utf8')).toBe(
        readFileSync(join(original, 'eviction_log.json'), 'utf8'),
      );
      const ri = (dir: string) => {
        const { created_at: _c, ...rest } = json(
          readFileSync(join(dir, 'recall_index.json'), 'utf8'),
        );
        return rest;
      };
      expect(ri(out)).toEqual(ri(original));
      // The exported directory is an ordinary store: validates, hydrates the same bytes.
      const back = await ContextFold.open({ dir: out, tokenizer: 'reference', mustExist: true });
      expect((await back.validate()).ok).toBe(true);
      await back.close();
    },
  );

  it('export fetches large nodes a byte budget at a time, not 500 to a page', async () => {
    // Five nodes of ~8 MB: one page of 500 held them all at once (peak RSS 2.5 GB for 500 MB).
    const url = pgStoreUrl('bytes');
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference' });
    const big = 'x'.repeat(PAGE_BYTES / 8);
    await cf.foldMany(
      Array.from({ length: 5 }, (_, i) => ({ stepId: i, summary: `s${i}`, content: `${i}${big}` })),
    );
    await cf.close();
    const loads: number[][] = [];
    const load = PgNodes.prototype.load;
    const spy = vi.spyOn(PgNodes.prototype, 'load').mockImplementation(function (
      this: PgNodes,
      steps,
    ) {
      loads.push([...steps]);
      return load.call(this, steps);
    });
    const out = join(tempDir().dir, '.contextfold');
    try {
      await transferStore({ from: url, to: out });
    } finally {
      spy.mockRestore();
    }
    const size = (step: number) =>
      statSync(join(out, 'cold_nodes', `step_${String(step).padStart(6, '0')}.json`)).size;
    expect(size(0)).toBeGreaterThan(PAGE_BYTES / 5);
    expect(loads.length).toBeGreaterThan(2);
    for (const steps of loads) {
      if (steps.length > 1)
        expect(steps.reduce((n, s) => n + size(s), 0)).toBeLessThanOrEqual(PAGE_BYTES);
    }
    expect(loads.flat().filter((s) => s === 4)).toHaveLength(2);
  });

  it('export pages the tables and builds no mirror of the index (it grew with the store)', async () => {
    const url = pgStoreUrl('nomirror');
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference' });
    await cf.foldMany(
      Array.from({ length: 1001 }, (_, i) => ({ stepId: i, summary: `s${i}`, content: `p${i}` })),
    );
    await cf.evict(7);
    await cf.close();
    const syncs = vi.spyOn(PgStore.prototype, 'sync');
    const pages: number[] = [];
    const entryPages = PgCopySource.prototype.entryPages;
    vi.spyOn(PgCopySource.prototype, 'entryPages').mockImplementation(async function* (
      this: PgCopySource,
      size: number,
    ) {
      for await (const page of entryPages.call(this, size)) {
        pages.push(page.length);
        yield page;
      }
    });
    const out = join(tempDir().dir, '.contextfold');
    try {
      expect(await transferStore({ from: url, to: out })).toMatchObject({
        nodes: 1001,
        evictions: 1,
      });
      expect(syncs).not.toHaveBeenCalled();
    } finally {
      vi.restoreAllMocks();
    }
    // Each pass read the entries 500 at a time.
    expect(pages).toEqual([500, 500, 1, 500, 500, 1]);
    const back = await ContextFold.open({ dir: out, tokenizer: 'reference', mustExist: true });
    expect((await back.entry(7))?.evicted).toBe(true);
    expect((await back.validate()).ok).toBe(true);
    await back.close();
  });

  it('export copies the store as it was when it began: a fold and an eviction meanwhile are not in it', async () => {
    // Before, the copy followed the store between its pages: it reported 3 nodes and wrote 4.
    const url = pgStoreUrl('snapshot');
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference' });
    await cf.foldMany(
      [1, 2, 3].map((i) => ({ stepId: i, summary: `s${i}`, content: `payload ${i}` })),
    );
    let writer: Promise<unknown> | null = null;
    const load = PgCopySource.prototype.load;
    vi.spyOn(PgCopySource.prototype, 'load').mockImplementation(async function (
      this: PgCopySource,
      steps,
    ) {
      // The first page is being verified: another writer commits before it is read.
      writer ??= cf.fold({ stepId: 4, summary: 's4', content: 'late' }).then(() => cf.evict(1));
      await writer;
      return load.call(this, steps);
    });
    const out = join(tempDir().dir, '.contextfold');
    try {
      expect(await transferStore({ from: url, to: out })).toMatchObject({ nodes: 3, evictions: 0 });
    } finally {
      vi.restoreAllMocks();
      await cf.close();
    }
    expect(readdirSync(join(out, 'cold_nodes')).sort()).toEqual([
      'step_000001.json',
      'step_000002.json',
      'step_000003.json',
    ]);
    expect(existsSync(join(out, 'eviction_log.json'))).toBe(false);
  });

  it('import-store verifies every node first: a tampered node loads nothing', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.foldMany([
      { stepId: 1, summary: 'one', content: 'first payload' },
      { stepId: 2, summary: 'two', content: 'second payload' },
    ]);
    await cf.close();
    const path = join(dir, 'cold_nodes', 'step_000002.json');
    writeFileSync(path, readFileSync(path, 'utf8').replace('second payload', 'second pAyload'));
    const url = pgStoreUrl('tampered');
    const r = await runCliInProcess(['--store', url, 'import-store', dir]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('step_000002.json');
    await expect(
      ContextFold.open({ store: url, tokenizer: 'reference', mustExist: true }),
    ).rejects.toMatchObject({ code: 'STORE_NOT_FOUND' });
  });

  it('copies the session log with a head of its own; a log cut short of its head loads nothing', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.fold({ stepId: 1, summary: 'one', content: 'first payload' });
    await cf.appendRecords('events', '{"a":1}\n');
    await cf.appendRecords('events', '{"a":2}\n');
    await cf.close();
    const url = pgStoreUrl('headed');
    const ok = await runCliInProcess(['--store', url, 'import-store', dir]);
    expect(ok.code, ok.stderr).toBe(0);
    const db = await ContextFold.open({ store: url, tokenizer: 'reference', mustExist: true });
    expect(await db.readRecords('events')).toMatchObject({
      text: '{"a":1}\n{"a":2}\n',
      head: { lines: 2, last_sha256: sha256Hex('{"a":2}') },
    });
    await db.close();
    // The last line removed behind the store's back: refused before anything is written.
    const log = join(dir, 'events.jsonl');
    writeFileSync(log, '{"a":1}\n');
    const cut = pgStoreUrl('cut');
    const r = await runCliInProcess(['--store', cut, 'import-store', dir]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${log} line 2 is missing`);
    await expect(
      ContextFold.open({ store: cut, tokenizer: 'reference', mustExist: true }),
    ).rejects.toMatchObject({ code: 'STORE_NOT_FOUND' });
  });

  it('export refuses an entry row that is no valid record, naming it, and writes nothing', async () => {
    // The index left such a row out, and the copy went on without it: exit 0, the step gone.
    const url = pgStoreUrl('badrow');
    const cf = await ContextFold.open({ store: url, tokenizer: 'reference' });
    await cf.foldMany(
      [1, 2, 3].map((i) => ({ stepId: i, summary: `s${i}`, content: `payload ${i}` })),
    );
    await cf.close();
    const storeId = new URL(url).searchParams.get('store_id');
    const db = new pg.Client({ connectionString: PG_URL! });
    await db.connect();
    try {
      for (const body of ['{not json', '{"step_id":3}']) {
        await db.query('UPDATE cf_entries SET body = $2 WHERE store_id = $1 AND step = 2', [
          storeId,
          body,
        ]);
        const work = tempDir().dir;
        const out = join(work, 'out', '.contextfold');
        const r = await runCliInProcess(['--store', url, 'export', '--to', out]);
        expect(r.code, r.stdout + r.stderr).toBe(3);
        expect(r.stderr).toContain(`store_id=${storeId}#cf_entries/2`);
        expect(readdirSync(work)).toEqual([]);
      }
      // A row deleted behind the engine's back: the change feed still names the step.
      await db.query('DELETE FROM cf_entries WHERE store_id = $1 AND step = 2', [storeId]);
      const out = join(tempDir().dir, 'out', '.contextfold');
      const r = await runCliInProcess(['--store', url, 'export', '--to', out]);
      expect(r.code, r.stdout + r.stderr).toBe(3);
      expect(r.stderr).toContain(`is missing (feed change 2 names it)`);
      expect(r.stderr).toContain(`store_id=${storeId}#cf_entries/2`);
      expect(existsSync(out)).toBe(false);
    } finally {
      await db.end();
    }
  });

  it('refuses a target that already holds nodes; export refuses an existing directory', async () => {
    const work = tempDir().dir;
    const dir = join(work, 'a', '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.fold({ stepId: 1, summary: 'one', content: 'x' });
    await cf.close();
    const url = pgStoreUrl('twice');
    await transferStore({ from: dir, to: url });
    await expect(transferStore({ from: dir, to: url })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining('already holds nodes'),
    });
    const r = await runCliInProcess(['--store', url, 'export', '--to', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('already holds a store');
    expect(existsSync(join(work, 'a', '.contextfold', 'recall_index.json'))).toBe(true);
  });
});

it.skipIf(HAS_SHARED)(
  'store transfer round trip needs ../shared for the reference store',
  () => {},
);

describe('export and import-store between directories', () => {
  async function source(): Promise<{ work: string; dir: string }> {
    const work = tempDir().dir;
    const dir = join(work, 'src', '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.fold({ stepId: 1, summary: 'one', content: 'first payload' });
    await cf.close();
    return { work, dir };
  }

  /** A source of `n` small turns (pages of the copy: 500 nodes each). */
  async function bigSource(n: number): Promise<{ work: string; dir: string }> {
    const work = tempDir().dir;
    const dir = join(work, 'big', '.contextfold');
    const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
    await cf.foldMany(
      Array.from({ length: n }, (_, i) => ({ stepId: i, summary: `s${i}`, content: `p${i}` })),
    );
    await cf.close();
    return { work, dir };
  }

  it('a source record that is malformed is refused, named, and nothing is written', async () => {
    // The index could not load: the copy wrote an empty store and exited 0.
    const { work, dir } = await source();
    const path = join(dir, 'recall_index.json');
    const ri = JSON.parse(readFileSync(path, 'utf8')) as { nodes: Record<string, object> };
    ri.nodes['1'] = { ...ri.nodes['1'], token_estimate: 'x' };
    writeFileSync(path, JSON.stringify(ri));
    await expect(transferStore({ from: dir, to: join(work, 'out') })).rejects.toMatchObject({
      code: 'INTEGRITY_CHECK',
      message: expect.stringContaining(path),
    });
    expect(existsSync(join(work, 'out'))).toBe(false);
  });

  it('a target that is a file is one usage line, not an internal error', async () => {
    const { work, dir } = await source();
    const file = join(work, 'a-file');
    writeFileSync(file, 'mine');
    const exp = await runCliInProcess(['--dir', dir, 'export', '--to', file]);
    expect(exp).toMatchObject({ code: 1, stdout: '' });
    expect(exp.stderr).toBe(
      `contextfold: UsageError: the target ${file} is (or is under) a file, not a directory: choose a new directory\n`,
    );
    // Under a file: stat fails with ENOTDIR (it was an internal error with a stack trace).
    const under = await runCliInProcess(['--dir', dir, 'export', '--to', join(file, 'x')]);
    expect(under).toMatchObject({ code: 1, stdout: '' });
    expect(under.stderr).toBe(
      `contextfold: UsageError: the target ${join(file, 'x')} is (or is under) a file, not a directory: choose a new directory\n`,
    );
    const imp = await runCliInProcess(['--dir', file, '--json', 'import-store', dir]);
    expect(imp.code).toBe(1);
    expect(JSON.parse(imp.stdout)).toMatchObject({ code: 'USAGE', path: file });
    expect(readFileSync(file, 'utf8')).toBe('mine');
  });

  it('a target in a directory that is not writable is one usage line, not an internal error', async (ctx) => {
    const { work, dir } = await source();
    const parent = join(work, 'locked');
    mkdirSync(parent);
    // Unwritable even for root (chattr +i), else by mode.
    let undo: () => void;
    if (process.getuid?.() === 0) {
      if (spawnSync('chattr', ['+i', parent]).status !== 0)
        return ctx.skip('cannot make a directory read-only here (no chattr as root)');
      undo = () => spawnSync('chattr', ['-i', parent]);
    } else {
      chmodSync(parent, 0o555);
      undo = () => chmodSync(parent, 0o755);
    }
    try {
      const to = join(parent, 'copy', '.contextfold');
      const exp = await runCliInProcess(['--dir', dir, 'export', '--to', to]);
      expect(exp).toMatchObject({ code: 1, stdout: '' });
      expect(exp.stderr).toMatch(
        new RegExp(
          `^contextfold: UsageError: cannot write the copy to ${to} \\(E[A-Z]+\\): check the permissions of ${parent}, or choose another target directory\n$`,
        ),
      );
      expect(readdirSync(parent)).toEqual([]);
    } finally {
      undo();
    }
  });

  it('a call without from or to is one usage error (it was a TypeError from path.resolve)', async () => {
    const { dir } = await source();
    for (const options of [{}, { from: dir }, { from: dir, to: '' }, { from: 5, to: 6 }]) {
      await expect(transferStore(options as never)).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringContaining('transferStore needs { from, to }'),
      });
    }
  });

  it('a target inside the source store is refused, and the source still validates', async () => {
    const { dir } = await source();
    for (const to of [join(dir, 'cold_nodes'), join(dir, 'copy', '.contextfold')]) {
      const r = await runCliInProcess(['--dir', dir, 'export', '--to', to]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`is inside the source store ${dir}`);
      const imp = await runCliInProcess(['--dir', to, 'import-store', dir]);
      expect(imp.code).toBe(1);
    }
    expect(readdirSync(dir).sort()).not.toContain('copy');
    const v = await runCliInProcess(['--dir', dir, 'validate']);
    expect(v).toMatchObject({ code: 0, stdout: 'ok: 1 node(s) verified, no problems\n' });
  });

  it('tells its progress: every node verified, then every node written, page by page', async () => {
    const { work, dir } = await bigSource(1200);
    const calls: [number, number, string][] = [];
    const r = await transferStore({
      from: dir,
      to: join(work, 'copy'),
      onProgress: (done, total, phase) => calls.push([done, total, phase]),
    });
    expect(r.nodes).toBe(1200);
    expect(calls).toEqual([
      [500, 1200, 'verifying'],
      [1000, 1200, 'verifying'],
      [1200, 1200, 'verifying'],
      [500, 1200, 'writing'],
      [1000, 1200, 'writing'],
      [1200, 1200, 'writing'],
    ]);
  });

  it('a copy that fails half-way through writing leaves no partial store at the target', async () => {
    const { work, dir } = await bigSource(700);
    const to = join(work, 'out', '.contextfold');
    // The source changes between the passes (as a server that stops would fail the read): the
    // second page no longer verifies after the first was written.
    const late = join(dir, 'cold_nodes', 'step_000600.json');
    await expect(
      transferStore({
        from: dir,
        to,
        onProgress: (_done, _total, phase) => {
          if (phase === 'writing')
            writeFileSync(late, readFileSync(late, 'utf8').replace('p600', 'p601'));
        },
      }),
    ).rejects.toMatchObject({ code: 'INTEGRITY_CHECK' });
    expect(existsSync(to)).toBe(false);
    expect(readdirSync(join(work, 'out'))).toEqual([]);
  });

  it('a copy stopped by Ctrl-C while writing leaves no staging directory behind', async () => {
    const { work, dir } = await bigSource(700);
    const to = join(work, 'out', '.contextfold');
    // The built module in a child process, interrupted as a terminal's Ctrl-C would.
    const module = pathToFileURL(join(dirname(CLI), '..', 'engine', 'store-transfer.js')).href;
    const script = `import { transferStore } from ${JSON.stringify(module)};
await transferStore({ from: ${JSON.stringify(dir)}, to: ${JSON.stringify(to)},
  onProgress: (_d, _t, phase) => { if (phase === 'writing') process.kill(process.pid, 'SIGINT'); } });`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script]);
    expect(r.signal, r.stderr.toString()).toBe('SIGINT');
    expect(readdirSync(join(work, 'out'))).toEqual([]);
  });

  it('a target beside the source is copied as before', async () => {
    const { work, dir } = await source();
    const to = join(work, 'src-copy');
    const r = await runCliInProcess(['--dir', dir, '--json', 'export', '--to', to]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ nodes: 1 });
  });
});

describe('export --to and import-store DIR take directories', () => {
  it('a URL there is one usage line naming the command that takes it, and nothing is created', async () => {
    const cwd = tempDir().dir;
    const dir = join(tempDir().dir, '.contextfold');
    await runCliInProcess(['--dir', dir, 'fold', '1', 'x']);
    const url = 'postgres://cf:secret@db:5432/contextfold?store_id=web';
    const exp = runCliProcess(['--dir', dir, 'export', '--to', url], { cwd });
    expect(exp).toMatchObject({
      code: 1,
      stderr:
        'contextfold: UsageError: --to takes a directory, not a URL: to copy a store into PostgreSQL, run contextfold --store URL import-store DIR\n',
    });
    const imp = runCliProcess(['--dir', join(cwd, 'new'), '--json', 'import-store', url], { cwd });
    expect(imp.code).toBe(1);
    expect(JSON.parse(imp.stdout).message).toMatch(/^import-store takes a directory, not a URL/);
    expect(imp.stdout).not.toContain('secret');
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe('transferStore options', () => {
  it('refuses an option it does not know, before anything is read or written', async () => {
    const work = tempDir().dir;
    const to = join(work, 'copy');
    await expect(
      transferStore({ from: join(work, 'none'), to, onProgres: () => {} } as never),
    ).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/^transferStore has no option 'onProgres' \(options: from, /),
    });
    expect(existsSync(to)).toBe(false);
  });
});
