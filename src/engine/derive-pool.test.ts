import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isContextFoldError } from '../protocol/errors.js';
import { DEFAULT_POLICY } from '../protocol/policy.js';
import { packAnalysis } from '../store/index-analyses.js';
import type { IndexWarning } from '../store/index-backend.js';
import { tempDir } from '../test-utils/temp-dir.js';
import type { NodeContext } from './build-node.js';
import { ContextFold } from './context-fold.js';
import {
  type BuildJob,
  buildInline,
  type DerivedText,
  type DeriveJob,
  DerivePool,
  DerivePoolClosedError,
  deriveClaimed,
  deriveInline,
  derivePacked,
} from './derive-pool.js';
import type { FoldInput } from './types.js';

// Workers import the compiled module (the test run builds dist/ once, see global-setup), so a
// pool only runs from dist/: these tests drive it there and compare with this thread's sources.
const POOL_MODULE = pathToFileURL(
  fileURLToPath(new URL('../../dist/engine/derive-pool.js', import.meta.url)),
).href;
const ENGINE = fileURLToPath(new URL('../../dist/engine/context-fold.js', import.meta.url));

const JOBS: DeriveJob[] = [
  { summary: 'tool: result', text: 'postgresql listening on port 5433' },
  { summary: 'tool: result', text: 'line one\r\nline two\r\n41 tests, 3 failures\r\n' },
  { summary: 'assistant: note', text: '' },
  { summary: 'user: ask', text: 'ünïcödé ✓ 𝔘 widget_3 src/app/main.ts:42 <|endoftext|>' },
  ...Array.from({ length: 37 }, (_, i) => ({
    summary: `tool: run ${i}`,
    text: Array.from({ length: 1 + (i % 9) * 20 }, (_, k) => `step ${i}.${k}: npm test -- w${k}`)
      .join('\n')
      .concat(i % 4 === 0 ? '\nError: ENOENT: no such file' : ''),
  })),
];

/** A batch of `n` turns from `from` on: varied enough that every field of an analysis differs. */
function batch(from: number, n: number): FoldInput[] {
  return Array.from({ length: n }, (_, i) => {
    const s = from + i;
    return {
      stepId: s,
      summary: `${['user', 'assistant', 'tool'][s % 3]}: turn ${s}`,
      content: `$ run job${s % 17} --port ${5000 + (s % 211)}\nresult ${s}: ${s % 5 === 0 ? 'FAILED' : 'ok'} in m${s % 31}.ts\n${'progress '.repeat(s % 13)}`,
    };
  });
}

/** Derived texts with their deflated bytes as Buffers (a structured clone gives Uint8Arrays). */
const buffered = (ds: readonly DerivedText[]) =>
  ds.map((d) => ({
    ...d,
    packed: d.packed && {
      body: Buffer.from(d.packed.body),
      features: Buffer.from(d.packed.features),
    },
  }));

const CLOCK_ISO = '2026-01-01T00:00:00Z';

/** Every derived row a scan reads, in key order. */
function dumpIndex(dir: string): Record<string, unknown[]> {
  const file = readdirSync(dir).find((n) => n.startsWith('index-') && n.endsWith('.sqlite'));
  const db = new Database(join(dir, file!), { readonly: true });
  try {
    const q = (sql: string) => db.prepare(sql).all();
    return {
      terms: q('SELECT field, term, id, df FROM terms ORDER BY field, term'),
      postings: q('SELECT term, last, first, n, data FROM postings ORDER BY term, last'),
      docs: q('SELECT step, length, parts, part_length, analysis FROM docs ORDER BY step'),
      analyses: q('SELECT id, akey, features, body FROM analyses ORDER BY id'),
      tokens: q('SELECT payload_sha256, tokenizer, count FROM tokens ORDER BY payload_sha256'),
      entries: q(
        'SELECT step, analysed, payload_sha256, artifact_sha256 FROM entries ORDER BY step',
      ),
    };
  } finally {
    db.close();
  }
}

/** Every node file of a store, by name. */
function nodeFiles(dir: string): Record<string, string> {
  const nodes = join(dir, 'cold_nodes');
  return Object.fromEntries(
    readdirSync(nodes)
      .sort()
      .map((n) => [n, readFileSync(join(nodes, n), 'utf8')]),
  );
}

const CTX: NodeContext = {
  policy: DEFAULT_POLICY,
  sessionId: 'pool-test',
  foldedAt: CLOCK_ISO,
  sanitized: true,
};

/** Inputs whose nodes differ in every field a node can have; one cannot be built. */
const BUILD_JOBS: BuildJob[] = [
  ...batch(0, 20).map((input) => ({ input, records: [] })),
  { input: { stepId: 20, summary: 'summary only' }, records: [] },
  {
    input: { stepId: 21, summary: 'bytes', content: Uint8Array.from([0x66, 0xff, 0x0a]) },
    records: [],
  },
  {
    input: { stepId: 22, summary: 'files', content: 'x', files: ['b.ts', 'a.ts'] },
    records: [
      {
        field: 'raw_content',
        pattern_id: 'secret:aws-secret-access-key',
        start: 0,
        end: 1,
        removed_sha256: '0'.repeat(64),
      },
    ],
  },
  { input: { stepId: 23, summary: 'bad \ud800 summary', content: 'y' }, records: [] },
  { input: { stepId: 24, summary: 'Cafe\u0301 NFD', content: 'Cafe\u0301\r\n' }, records: [] },
];

describe('DerivePool', () => {
  it('workers build the nodes this thread builds, a bad input as its error message', async () => {
    const pool = new DerivePool({ threads: 2, module: POOL_MODULE });
    const here = buildInline(BUILD_JOBS, CTX);
    expect(here[23]).toEqual({ error: expect.stringMatching(/lone surrogate/) });
    expect(here.filter((b) => 'error' in b)).toHaveLength(1);
    expect(await pool.build(BUILD_JOBS, CTX)).toEqual(here);
    expect(pool.started).toBe(2);
    await pool.close();
  });

  it('from sources it runs nothing off this thread, and derives the same', async () => {
    const pool = new DerivePool({ threads: 2 });
    expect(pool.usable).toBe(false);
    expect(await pool.derive(JOBS, { count: 'o200k' })).toEqual(deriveInline(JOBS, 'o200k'));
    expect(pool.started).toBe(0);
  });

  it('workers derive what this thread derives, in order, with and without a share here', async () => {
    const pool = new DerivePool({ threads: 2, module: POOL_MODULE });
    expect(pool.usable).toBe(true);
    for (const count of ['o200k', 'none'] as const) {
      const here = deriveInline(JOBS, count);
      expect(await pool.derive(JOBS, { count })).toEqual(here);
      expect(await pool.derive(JOBS, { count, thisThread: true })).toEqual(here);
    }
    expect(deriveInline(JOBS, 'none').every((d) => d.tokens === null)).toBe(true);
    expect(pool.started).toBe(2);
    // Two calls at once: each gets its own answers.
    const [a, b] = await Promise.all([
      pool.derive(JOBS.slice(0, 5), { count: 'o200k' }),
      pool.derive(JOBS.slice(5), { count: 'o200k' }),
    ]);
    expect([...a, ...b]).toEqual(deriveInline(JOBS, 'o200k'));
    await pool.close();
    // A closed pool starts new workers on its next use.
    expect(await pool.derive(JOBS.slice(0, 3), { count: 'o200k' })).toEqual(
      deriveInline(JOBS.slice(0, 3), 'o200k'),
    );
    expect(pool.started).toBe(4);
    await pool.close();
  });

  it('with pack, each analysis comes deflated as an index file stores it, from any thread', async () => {
    const pool = new DerivePool({ threads: 1, module: POOL_MODULE });
    const here = derivePacked(JOBS, 'none');
    for (const d of here) {
      expect(d.packed).toEqual(packAnalysis(d.analysis));
      expect(inflateRawSync(d.packed!.body).toString()).toBe(
        JSON.stringify([d.analysis.terms, d.analysis.tfs]),
      );
    }
    const theirs = await pool.derive(JOBS, { count: 'none', pack: true, thisThread: true });
    expect(buffered(theirs)).toEqual(buffered(here));
    // Without it, nothing is deflated.
    expect((await pool.derive(JOBS, { count: 'none' })).every((d) => d.packed === undefined)).toBe(
      true,
    );
    await pool.close();
  });

  it('deriveClaimed derives from the shared counter on, in claims, each result at its index', () => {
    const claim = new Int32Array(new SharedArrayBuffer(4));
    // Another thread already took the first 7 jobs: this one derives the rest, in claims.
    claim[0] = 7;
    const out = deriveClaimed(JOBS, 'none', false, claim);
    const all = deriveInline(JOBS, 'none');
    expect(out.slice(0, 7)).toEqual(Array(7).fill(null));
    expect(out.slice(7)).toEqual(all.slice(7));
    expect(claim[0]).toBeGreaterThanOrEqual(JOBS.length);
    // Nothing left to claim: nothing derived.
    expect(deriveClaimed(JOBS, 'none', false, claim).every((d) => d === null)).toBe(true);
  });

  it('share: each job derived once, by a worker or this thread, results in order', async () => {
    const pool = new DerivePool({ threads: 2, module: POOL_MODULE });
    const big = Array.from({ length: 8 }, () => JOBS).flat();
    const here = derivePacked(big, 'o200k');
    // Finished at once: this thread claims jobs beside the workers.
    const now = await pool.share(big, { count: 'o200k', pack: true })();
    expect(buffered(now)).toEqual(buffered(here));
    // Finished later: the workers took what they could meanwhile.
    const finish = pool.share(big, { count: 'none' });
    await new Promise((r) => setTimeout(r, 200));
    expect(await finish()).toEqual(deriveInline(big, 'none'));
    await pool.close();
    // A closed pool's share rejects as closed.
    const closing = pool.share(big, { count: 'o200k' });
    await pool.close();
    await expect(closing()).rejects.toBeInstanceOf(DerivePoolClosedError);
    // From sources: all on this thread.
    expect(await new DerivePool({ threads: 2 }).share(JOBS, { count: 'none' })()).toEqual(
      deriveInline(JOBS, 'none'),
    );
  });

  it('close() during a derive rejects it as closed, and the pool stays usable', async () => {
    const pool = new DerivePool({ threads: 1, module: POOL_MODULE });
    const big = Array.from({ length: 40 }, () => JOBS).flat();
    const running = pool.derive(big, { count: 'o200k' });
    expect(pool.running).toBe(1);
    await pool.close();
    expect(pool.running).toBe(0);
    await expect(running).rejects.toBeInstanceOf(DerivePoolClosedError);
    expect(pool.usable).toBe(true);
    expect(await pool.derive(JOBS, { count: 'none' })).toEqual(deriveInline(JOBS, 'none'));
    expect(pool.started).toBe(2);
    await pool.close();
  });

  it('a worker that cannot load rejects the call and leaves the pool unusable', async () => {
    const pool = new DerivePool({ threads: 1, module: 'file:///nonexistent/derive-pool.js' });
    await expect(pool.derive(JOBS, { count: 'o200k' })).rejects.toThrow(/derive worker/);
    expect(pool.usable).toBe(false);
    // Unusable: the next call derives on this thread.
    expect(await pool.derive(JOBS, { count: 'none' })).toEqual(deriveInline(JOBS, 'none'));
    await pool.close();
  });
});

describe('foldMany with worker threads', () => {
  // 2,200 new turns are three rounds (FOLD_ROUND 1,024): the first derived by the workers and
  // this thread, the others by the workers while the round before is committed. Steps 0-99 are
  // folded first (existing: never derived again), and step 150 comes twice.
  const first = batch(0, 100);
  const second = [...batch(0, 2300), batch(150, 1)[0]!];

  it('writes the same derived index as the inline path (o200k), and uses the workers', () => {
    const { dir } = tempDir();
    const pooled = join(dir, 'pooled');
    const script = `
      const { ContextFold } = await import(${JSON.stringify(ENGINE)});
      const open = () => ContextFold.open({ dir: ${JSON.stringify(pooled)}, clock: () => new Date(${JSON.stringify(CLOCK_ISO)}) });
      const mk = ${batch.toString()};
      let cf = await open();
      await cf.foldMany(mk(0, 100));
      const results = await cf.foldMany([...mk(0, 2300), mk(150, 1)[0]]);
      const started = cf.pool ? cf.pool.started : 0;
      const running = cf.pool ? cf.pool.running : -1;
      await cf.close();
      console.log(JSON.stringify({ started, running, already: results.filter((r) => r.already_folded).length }));`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(out.stderr).toBe('');
    const run = JSON.parse(out.stdout) as { started: number; running: number; already: number };
    expect(run.started).toBeGreaterThan(0);
    // Stopped when the batch is done: a long-lived process keeps no idle worker.
    expect(run.running).toBe(0);
    expect(run.already).toBe(101);
    return (async () => {
      const inline = join(dir, 'inline');
      const cf = await ContextFold.open({ dir: inline, clock: () => new Date(CLOCK_ISO) });
      await cf.foldMany(first);
      await cf.foldMany(second);
      await cf.close();
      const a = dumpIndex(pooled);
      const b = dumpIndex(inline);
      expect(a.docs).toHaveLength(2300);
      expect(a.tokens).toHaveLength(2300);
      expect(a).toEqual(b);
      // The nodes the workers built are the bytes this thread builds.
      const files = nodeFiles(pooled);
      expect(Object.keys(files)).toHaveLength(2300);
      expect(files).toEqual(nodeFiles(inline));
    })();
  }, 120_000);

  it('a bad input in a long batch: the error inline folding gives, nothing written', async () => {
    const { dir } = tempDir();
    const bad = join(dir, 'bad');
    const script = `
      const { ContextFold } = await import(${JSON.stringify(ENGINE)});
      const mk = ${batch.toString()};
      const cf = await ContextFold.open({ dir: ${JSON.stringify(bad)} });
      const inputs = mk(0, 2000);
      inputs[1500] = { ...inputs[1500], summary: 'lone \\ud800' };
      inputs[1700] = { ...inputs[1700], content: 'lone \\udc00' };
      try { await cf.foldMany(inputs); console.log('folded'); }
      catch (e) { console.log(JSON.stringify({ name: e.name, message: e.message, started: cf.pool ? cf.pool.started : 0, running: cf.pool ? cf.pool.running : -1 })); }
      await cf.close();`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(out.stderr).toBe('');
    const run = JSON.parse(out.stdout) as {
      name: string;
      message: string;
      started: number;
      running: number;
    };
    expect(run.started).toBeGreaterThan(0);
    // A failed batch stops its workers too.
    expect(run.running).toBe(0);
    const inputs = batch(0, 2000);
    inputs[1500] = { ...inputs[1500]!, summary: 'lone \ud800' };
    const here = await ContextFold.open({ dir: join(dir, 'inline') });
    const e = await here.foldMany(inputs).catch((x: unknown) => x);
    await here.close();
    expect(isContextFoldError(e)).toBe(true);
    expect(run).toMatchObject({ name: (e as Error).name, message: (e as Error).message });
    expect(run.message).toMatch(/step 1500/);
    const nodes = join(bad, 'cold_nodes');
    expect(existsSync(nodes) ? readdirSync(nodes) : []).toEqual([]);
  }, 120_000);

  it('a pool that fails mid-batch: one warning, and the batch is derived inline', async () => {
    const { dir } = tempDir();
    const warnings: IndexWarning[] = [];
    const open = (d: string) =>
      ContextFold.open({
        dir: d,
        tokenizer: 'reference',
        clock: () => new Date(CLOCK_ISO),
        onWarning: (w) => warnings.push(w),
      });
    const broken = await open(join(dir, 'broken'));
    // The engine's pool, replaced by one whose workers cannot load.
    (broken as unknown as { pool: DerivePool }).pool = new DerivePool({
      threads: 1,
      module: 'file:///nonexistent/derive-pool.js',
    });
    await broken.foldMany(second);
    await broken.close();
    expect(warnings.map((w) => w.code)).toEqual(['DERIVE_WORKERS_FAILED']);
    const plain = await open(join(dir, 'plain'));
    await plain.foldMany(second);
    await plain.close();
    expect(dumpIndex(join(dir, 'broken'))).toEqual(dumpIndex(join(dir, 'plain')));
  }, 120_000);
});
