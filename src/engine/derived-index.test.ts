import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import type { IndexWarning } from '../store/index-backend.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';
import type { FoldInput, OpenOptions } from './types.js';

const CLI = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));
const ENGINE = fileURLToPath(new URL('../../dist/engine/context-fold.js', import.meta.url));

const filler = (k: number) =>
  Array.from({ length: k }, (_, i) => `progress line ${i}: compiling module m${i}`).join('\n');

const TURNS: FoldInput[] = [
  { stepId: 0, summary: 'user: set up', content: 'Please set up the database and run the tests.' },
  {
    stepId: 1,
    summary: 'assistant: call',
    content: '{"command": "docker compose up -d postgres"}',
  },
  { stepId: 2, summary: 'tool: result', content: 'postgresql listening on port 5433' },
  {
    stepId: 3,
    summary: 'assistant: call',
    content: '{"command": "mix test test/billing_test.exs"}',
  },
  {
    stepId: 4,
    summary: 'tool: result',
    content: `${filler(300)}\nFinished in 2.1 seconds\n41 tests, 3 failures\n${filler(40)}`,
  },
  { stepId: 5, summary: 'assistant: note', content: 'Three billing tests fail; I will look.' },
  { stepId: 6, summary: 'tool: result', content: 'redis ready on 127.0.0.1:6380 (pid 4242)' },
  { stepId: 7, summary: 'tool: result', content: new Uint8Array([0xff, 0xfe, 0x41, 0x42]) },
  { stepId: 8, summary: 'empty turn about kafka' },
  ...Array.from({ length: 24 }, (_, i) => ({
    stepId: 9 + i,
    summary: 'assistant: note',
    content: `remark ${i} about styling widget${i % 5} — ünïcödé ✓ 𝔘 port ${6000 + i}`,
  })),
];

const PROMPTS = [
  'Which port is postgresql listening on?',
  'How many billing tests failed in the last run?',
  'what pid does redis have?',
  'styling widget3 port',
  'kafka',
];

const CLOCK = () => new Date('2026-01-01T00:00:00Z');

function open(dir: string, extra: Partial<OpenOptions> = {}) {
  return ContextFold.open({ dir, tokenizer: 'reference', clock: CLOCK, ...extra });
}

/** Everything the engine answers for the prompts, both modes. */
async function answers(cf: ContextFold) {
  const out = [];
  for (const p of PROMPTS) {
    out.push({
      ranked: await cf.scan(p, { mode: 'ranked' }),
      reference: await cf.scan(p, { mode: 'reference' }),
      recall: await cf.recall(p),
      pageIn: await cf.pageIn(p),
      pageInReference: await cf.pageIn(p, { mode: 'reference' }),
    });
  }
  return out;
}

const indexFiles = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('index-'));
const indexDb = (dir: string) => join(dir, indexFiles(dir).find((n) => n.endsWith('.sqlite'))!);

/** A store holding TURNS, with (`journal`) or without an uncompacted journal. */
async function seeded(journal: boolean): Promise<string> {
  const dir = join(tempDir().dir, '.contextfold');
  const cf = await open(dir);
  await cf.foldMany(TURNS);
  await cf.close({ compact: !journal });
  return dir;
}

function collect(): { warnings: IndexWarning[]; onWarning: (w: IndexWarning) => void } {
  const warnings: IndexWarning[] = [];
  return { warnings, onWarning: (w) => warnings.push(w) };
}

describe('the derived index is rebuildable, never the truth', () => {
  it('after close, the files the reference engine reads (nodes, recall_index.json, eviction log) alone validate and hydrate', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await open(dir);
    await cf.foldMany(TURNS);
    await cf.evict(2);
    const before = await answers(cf);
    await cf.close();
    // What the reference engine reads; the journal is gone (compacted into recall_index.json).
    expect(
      readdirSync(dir)
        .filter((n) => !/^index-|^write\.lock$/.test(n))
        .sort(),
    ).toEqual(['cold_nodes', 'eviction_log.json', 'recall_index.json']);
    const only = join(tempDir().dir, '.contextfold');
    mkdirSync(only, { recursive: true });
    for (const n of ['cold_nodes', 'eviction_log.json', 'recall_index.json'])
      cpSync(join(dir, n), join(only, n), { recursive: true });
    const ref = await open(only);
    expect(await ref.validate()).toEqual({
      ok: true,
      checked: TURNS.length,
      sanitized: TURNS.length,
      problems: [],
      // The reference files alone have no derived index: built, and said.
      warnings: [
        expect.objectContaining({
          code: 'INDEX_REBUILT',
          message: expect.stringMatching(/missing/),
        }),
      ],
    });
    for (const t of TURNS) {
      const bytes = Buffer.from(await ref.hydrateBytes(t.stepId));
      // A turn without content has its summary as payload (the reference rule).
      const given = t.content ?? t.summary;
      expect(bytes.equals(Buffer.from(given)), `step ${t.stepId}`).toBe(true);
    }
    expect((await ref.status()).evicted).toBe(1);
    expect(await answers(ref)).toEqual(before);
    await ref.close();
  });

  it('deleting it mid-session loses no entry a fold reported done, and changes no answer', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const { warnings, onWarning } = collect();
    const a = await open(dir, { onWarning });
    await a.foldMany(TURNS.slice(0, 20));
    for (const t of TURNS.slice(20, 30)) await a.fold(t); // all in the journal, none compacted
    expect((await a.status()).journal_entries).toBe(30);
    for (const f of indexFiles(dir)) rmSync(join(dir, f));
    await a.fold(TURNS[30]!);
    expect(warnings.map((w) => w.code)).toEqual(['INDEX_REBUILT']);
    expect(warnings[0]!.message).toMatch(/missing: rebuilt index-\d+-[0-9a-f]{8}\.sqlite/);
    for (const f of indexFiles(dir)) rmSync(join(dir, f));
    const b = await open(dir, { onWarning });
    expect((await b.entries()).map((e) => e.step_id)).toEqual(
      TURNS.slice(0, 31).map((t) => t.stepId),
    );
    const ref = await open(join(tempDir().dir, '.contextfold'));
    await ref.foldMany(TURNS.slice(0, 31));
    const expected = await answers(ref);
    expect(await answers(a)).toEqual(expected);
    expect(await answers(b)).toEqual(expected);
    expect(await b.validate()).toEqual({
      ok: true,
      checked: 31,
      sanitized: 31,
      problems: [],
      warnings: [],
    });
    for (const cf of [a, b, ref]) await cf.close({ compact: false });
  });

  const corruptions: [string, (path: string) => void][] = [
    ['garbage over its header', (p) => writeFileSync(p, Buffer.alloc(4096, 0x5a))],
    ['truncated to half', (p) => truncateSync(p, Math.floor(statSync(p).size / 2 / 4096) * 4096)],
    [
      'a page in the middle zeroed',
      (p) => {
        const bytes = readFileSync(p);
        const pages = bytes.length / 4096;
        bytes.fill(0, Math.floor(pages / 2) * 4096, (Math.floor(pages / 2) + 1) * 4096);
        writeFileSync(p, bytes);
      },
    ],
  ];
  for (const journal of [false, true]) {
    for (const [name, corrupt] of corruptions) {
      it(`${name} (${journal ? 'with' : 'without'} a journal): same answers, never a wrong page`, async () => {
        const dir = await seeded(journal);
        const before = await answers(await open(dir));
        corrupt(indexDb(dir));
        const { warnings, onWarning } = collect();
        const cf = await open(dir, { onWarning });
        expect(await answers(cf)).toEqual(before);
        const clean = {
          ok: true,
          checked: TURNS.length,
          sanitized: TURNS.length,
          problems: [],
          warnings: [],
        };
        if (name !== 'a page in the middle zeroed') {
          // Detected corruption is rebuilt with a warning.
          expect(warnings.map((w) => w.code)).toEqual(['INDEX_REBUILT']);
          expect(await cf.validate()).toEqual(clean);
        } else if (warnings.length === 0) {
          // A zeroed page no answer reads changes no answer; validate finds it, reindex mends it.
          expect((await cf.validate()).problems).toEqual([
            expect.objectContaining({
              kind: 'index',
              message: expect.stringMatching(/quick_check/),
            }),
          ]);
          await cf.reindex();
          expect(await cf.validate()).toEqual(clean);
        } else {
          expect(await cf.validate()).toEqual(clean);
        }
        await cf.close({ compact: false });
      });
    }
  }

  it('reindex reports its progress through the analysis of every node, round by round', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const writer = await open(dir);
    const n = 130; // several analysis rounds
    await writer.foldMany(
      Array.from({ length: n }, (_, i) => ({
        stepId: i,
        summary: 'tool: result',
        content: `line ${i}`,
      })),
    );
    await writer.close();
    const cf = await open(dir);
    const heard: [number, number][] = [];
    const r = await cf.reindex({ onProgress: (done, total) => heard.push([done, total]) });
    expect(r.analysed).toBe(n);
    expect(heard.length).toBeGreaterThan(1);
    expect(heard.at(-1)).toEqual([n, n]);
    for (let i = 1; i < heard.length; i++) expect(heard[i]![0]).toBeGreaterThan(heard[i - 1]![0]);
    await cf.close();
  });

  it('validate finds a corrupt page no read has touched; reindex repairs it', async () => {
    const dir = await seeded(false);
    const path = indexDb(dir);
    const bytes = readFileSync(path);
    const page = Math.floor(bytes.length / 4096) - 2;
    bytes.fill(0x41, page * 4096, (page + 1) * 4096);
    writeFileSync(path, bytes);
    const cf = await open(dir);
    const v = await cf.validate();
    expect(v.problems).toEqual([
      expect.objectContaining({ kind: 'index', message: expect.stringMatching(/quick_check/) }),
    ]);
    await cf.reindex();
    expect(await cf.validate()).toEqual({
      ok: true,
      checked: TURNS.length,
      sanitized: TURNS.length,
      problems: [],
      warnings: [],
    });
    await cf.close();
  });

  it('a foreign SQLite file in place of the index is rebuilt with a warning', async () => {
    const dir = await seeded(true);
    const before = await answers(await open(dir));
    const path = indexDb(dir);
    rmSync(path);
    const foreign = new Database(path);
    foreign.exec('CREATE TABLE entries (step INTEGER); INSERT INTO entries VALUES (1);');
    foreign.close();
    const { warnings, onWarning } = collect();
    const cf = await open(dir, { onWarning });
    expect(await answers(cf)).toEqual(before);
    expect(warnings).toEqual([
      expect.objectContaining({ code: 'INDEX_REBUILT', message: expect.stringMatching(/foreign/) }),
    ]);
    await cf.close();
  });

  it('validate reports an index that disagrees with the store files; reindex repairs it', async () => {
    const dir = await seeded(true);
    const before = await answers(await open(dir));
    const db = new Database(indexDb(dir));
    const body = db.prepare('SELECT body FROM entries WHERE step = 2').pluck().get() as Buffer;
    const json = inflateRawSync(body).toString('utf8').replace('listening', 'LISTENING');
    db.prepare('UPDATE entries SET body = ? WHERE step = 2').run(deflateRawSync(json));
    db.close();
    const cf = await open(dir);
    const v = await cf.validate();
    expect(v.ok).toBe(false);
    expect(v.problems).toEqual([
      expect.objectContaining({
        kind: 'index',
        message: expect.stringMatching(/step 2 differs.*reindex/),
      }),
    ]);
    const r = await cf.reindex();
    expect(r).toMatchObject({ nodes: TURNS.length, analysed: TURNS.length });
    expect(await cf.validate()).toEqual({
      ok: true,
      checked: TURNS.length,
      sanitized: TURNS.length,
      problems: [],
      warnings: [],
    });
    expect(await answers(cf)).toEqual(before);
    await cf.close();
  });

  it('an interrupted fold (node written, never committed) stays an orphan, also after a rebuild', async () => {
    const dir = await seeded(true);
    const other = await open(join(tempDir().dir, '.contextfold'));
    await other.fold({ stepId: 99, summary: 'never committed', content: 'orphan bytes' });
    cpSync(
      join(other.dir, 'cold_nodes', 'step_000099.json'),
      join(dir, 'cold_nodes', 'step_000099.json'),
    );
    for (const f of indexFiles(dir)) rmSync(join(dir, f));
    const cf = await open(dir);
    const v = await cf.validate();
    expect(v.problems).toEqual([expect.objectContaining({ kind: 'orphaned_node', step_id: 99 })]);
    await expect(cf.hydrate(99)).rejects.toMatchObject({ name: 'OrphanedNodeError' });
    expect((await cf.status()).nodes).toBe(TURNS.length);
  });

  it('a new analyzer version re-analyses every node from its verified content', async () => {
    const dir = await seeded(false);
    const before = await answers(await open(dir));
    const db = new Database(indexDb(dir));
    const st = JSON.parse(db.prepare('SELECT json FROM state').pluck().get() as string);
    db.prepare('UPDATE state SET json = ?').run(JSON.stringify({ ...st, analyzer: 'older' }));
    db.close();
    const cf = await open(dir);
    expect((await cf.status()).index?.pending_analysis).toBe(TURNS.length);
    expect(await answers(cf)).toEqual(before);
    expect((await cf.status()).index?.pending_analysis).toBe(0);
    await cf.close();
  });
});

describe('stored analyses are derived, never trusted', () => {
  it('one that does not decode is never ranked with: the index is rebuilt and re-analysed', async () => {
    const dir = await seeded(false);
    const first = await open(dir);
    const before = await answers(first);
    await first.close({ compact: false });
    const db = new Database(indexDb(dir));
    // The kept analyses, which the documents read their features from (a rebuild must not
    // carry them over).
    const bad = deflateRawSync('{"version":1,"keys":["port"]}');
    db.prepare('UPDATE analyses SET features = ?').run(bad);
    db.close();
    const { warnings, onWarning } = collect();
    const cf = await open(dir, { onWarning });
    expect(await answers(cf)).toEqual(before);
    expect(warnings.map((w) => w.code)).toEqual(['INDEX_REBUILT']);
    expect(warnings[0]!.message).toContain('does not decode');
    await cf.close({ compact: false });
  });
});

describe('a long-lived engine follows other writers', () => {
  it('its cached reads stay in step with every fold, eviction and rebuild of another engine', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const a = await open(dir);
    const b = await open(dir);
    const fresh = async () => {
      const cf = await open(dir);
      const r = await answers(cf);
      await cf.close({ compact: false });
      return r;
    };
    await b.foldMany(TURNS.slice(0, 12));
    expect(await answers(a)).toEqual(await fresh());
    expect((await a.entry(2))?.evicted).toBe(false);
    await b.foldMany(TURNS.slice(12, 24));
    await b.evict(2);
    expect(await answers(a)).toEqual(await fresh());
    expect((await a.entry(2))?.evicted).toBe(true);
    for (const t of TURNS.slice(24)) await b.fold(t);
    await b.compact();
    expect(await answers(a)).toEqual(await fresh());
    await b.reindex();
    expect(await answers(a)).toEqual(await fresh());
    await a.close({ compact: false });
    await b.close({ compact: false });
  });

  it('the last analysed step it reads follows the folds and drops of another engine', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const a = await open(dir);
    const b = await open(dir);
    const steps = TURNS.map((t) => t.stepId);
    const lastOf = async (cf: ContextFold) => {
      await cf.scan('postgresql port', { mode: 'ranked' }); // in step with the index
      return cf.backend.fieldStats('ranked').lastStep;
    };
    await b.foldMany(TURNS.slice(0, 10));
    expect(await lastOf(a)).toBe(Math.max(...steps.slice(0, 10)));
    expect(await lastOf(a)).toBe(Math.max(...steps.slice(0, 10))); // read again: unchanged
    await b.foldMany(TURNS.slice(10, 12));
    const top = Math.max(...steps.slice(0, 12));
    expect(await lastOf(a)).toBe(top);
    await b.dropEntry(top, 'test: drop the last analysed turn');
    expect(await lastOf(a)).toBe(Math.max(...steps.slice(0, 12).filter((s) => s !== top)));
    await a.close({ compact: false });
    await b.close({ compact: false });
  });

  it("a read racing another process's commit is never counted twice", async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const b = await open(dir);
    await b.foldMany(TURNS.slice(0, 10));
    const a = await open(dir);
    await a.status(); // synced: its cache is at b's last change
    await b.foldMany(TURNS.slice(10, 20)); // commits while a is "between" sync and read
    const before = {
      df: a.backend.df('ranked', 'remark'),
      list: a.backend.postings('ranked', 'remark', 256),
    };
    await a.status(); // a catches up with the change feed
    const c = await open(dir);
    await c.status();
    expect(a.backend.df('ranked', 'remark')).toBe(c.backend.df('ranked', 'remark'));
    expect(a.backend.postings('ranked', 'remark', 256)).toEqual(
      c.backend.postings('ranked', 'remark', 256),
    );
    expect(before.df).toBe(c.backend.df('ranked', 'remark'));
    for (const cf of [a, b, c]) await cf.close({ compact: false });
  });
  it("validate beside another engine's folds does not report the index stale", async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const a = await open(dir);
    const b = await open(dir);
    const turn = (s: number): FoldInput => ({ stepId: s, summary: `t ${s}`, content: `c ${s}` });
    await b.foldMany(Array.from({ length: 1500 }, (_, i) => turn(i)));
    let next = 1500;
    let validating = true;
    const writer = (async () => {
      while (validating) await b.fold(turn(next++));
    })();
    const stale: string[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const v = await a.validate();
        stale.push(...v.problems.filter((p) => p.kind === 'index').map((p) => p.message));
      }
    } finally {
      validating = false;
      await writer;
    }
    expect(next).toBeGreaterThan(1504); // the writer committed while validate compared
    expect(stale.map((m) => m.slice(0, 160))).toEqual([]);
    await a.close({ compact: false });
    await b.close({ compact: false });
  }, 60_000);
  it("validate: a node another engine commits after validate's walk passed its step is no orphan", async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const a = await open(dir);
    const b = await open(dir);
    await b.foldMany(TURNS.slice(0, 12));
    const store = (a as unknown as { store: { listNodes: () => Promise<unknown> } }).store;
    const listNodes = store.listNodes.bind(store);
    vi.spyOn(store, 'listNodes').mockImplementationOnce(async () => {
      await b.fold(TURNS[12]!); // committed between the walk of the entries and the listing
      return listNodes();
    });
    const v = await a.validate();
    expect(v.problems).toEqual([]);
    expect(v.checked).toBe(12);
    await a.close({ compact: false });
    await b.close({ compact: false });
  });
});

describe('a rebuild from recall_index.json in rounds', () => {
  it('indexes every entry of a snapshot longer than one round, with the same answers', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const many = Array.from({ length: 2100 }, (_, i) => ({
      stepId: i,
      summary: `note ${i}`,
      content: `value ${i} of gauge${i % 13} at port ${7000 + (i % 50)}`,
    }));
    const a = await open(dir);
    await a.foldMany(many);
    const expected = {
      entries: (await a.status()).nodes,
      scan: await a.scan('which port was gauge7 on, value 2099?'),
      recall: await a.recall('gauge12', { limit: 5 }),
    };
    await a.close(); // writes recall_index.json: the rebuild reads the snapshot alone
    for (const f of indexFiles(dir)) rmSync(join(dir, f));
    const b = await open(dir);
    expect((await b.status()).nodes).toBe(2100);
    expect(expected.entries).toBe(2100);
    for (const step of [0, 1023, 1024, 2047, 2048, 2099])
      expect((await b.entry(step))?.step_id).toBe(step);
    expect(await b.scan('which port was gauge7 on, value 2099?')).toEqual(expected.scan);
    expect(await b.recall('gauge12', { limit: 5 })).toEqual(expected.recall);
    expect((await b.validate()).ok).toBe(true);
    await b.close({ compact: false });
  }, 60_000);
});

describe('term rows of batched folds', () => {
  it('frequencies and postings do not depend on how the folds were batched', async () => {
    const one = await open(join(tempDir().dir, '.contextfold'));
    await one.foldMany(TURNS);
    const split = await open(join(tempDir().dir, '.contextfold'));
    // Single folds, then batches whose terms are partly new and partly known.
    for (const t of TURNS.slice(0, 3)) await split.fold(t);
    await split.foldMany(TURNS.slice(3, 12));
    await split.foldMany(TURNS.slice(12));
    for (const field of ['ranked', 'reference'] as const) {
      expect(split.backend.fieldStats(field)).toEqual(one.backend.fieldStats(field));
      const terms = one.backend.termsWithPrefix(field, '');
      expect(terms.length).toBeGreaterThan(20);
      expect(split.backend.termsWithPrefix(field, '')).toEqual(terms);
      for (const t of terms) {
        expect(split.backend.df(field, t), t).toBe(one.backend.df(field, t));
        expect(split.backend.postings(field, t, 256), t).toEqual(
          one.backend.postings(field, t, 256),
        );
      }
    }
    expect(await answers(split)).toEqual(await answers(one));
    await one.close({ compact: false });
    await split.close({ compact: false });
  });
});

describe('a dropped entry (contextfold repair)', () => {
  it('leaves the index, other engines, a rebuild and recall_index.json as if never folded', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const a = await open(dir);
    const b = await open(dir);
    await b.foldMany(TURNS);
    await b.evict(6);
    await answers(a); // a's read caches are warm
    const gone = [2, 4, 6]; // 4 spans several blocks; 6 was evicted
    for (const step of gone) await b.dropEntry(step, `test: drop ${step}`);
    const ref = await open(join(tempDir().dir, '.contextfold'));
    await ref.foldMany(TURNS.filter((t) => !gone.includes(t.stepId)));
    const expected = await answers(ref);
    expect(await answers(b)).toEqual(expected);
    expect(await answers(a)).toEqual(expected);
    for (const field of ['ranked', 'reference'] as const) {
      expect(b.backend.fieldStats(field)).toEqual(ref.backend.fieldStats(field));
      expect(a.backend.fieldStats(field)).toEqual(ref.backend.fieldStats(field));
    }
    expect(b.backend.df('ranked', 'postgresql')).toBe(0);
    expect(b.backend.termsWithPrefix('ranked', 'postgres')).toEqual([]);
    expect((await b.status()).evicted).toBe(0);
    // Rebuilt from recall_index.json + the journal's drop records: the same index.
    for (const f of indexFiles(dir)) rmSync(join(dir, f));
    const c = await open(dir);
    expect(await answers(c)).toEqual(expected);
    expect(c.backend.fieldStats('ranked')).toEqual(ref.backend.fieldStats('ranked'));
    await c.close({ compact: false });
    await a.close({ compact: false });
    await b.close(); // compacts: the reference index file is written without the dropped steps
    const keys = Object.keys(
      (JSON.parse(readFileSync(join(dir, 'recall_index.json'), 'utf8')) as { nodes: object }).nodes,
    );
    expect(keys.map(Number).sort((x, y) => x - y)).toEqual(
      TURNS.map((t) => t.stepId).filter((s) => !gone.includes(s)),
    );
    expect(existsSync(join(dir, 'eviction_log.json'))).toBe(false);
    // The dropped steps' node files are untouched (repair quarantines them): orphans now.
    const d = await open(dir);
    expect(await answers(d)).toEqual(expected);
    const v = await d.validate();
    expect(v.problems.map((p) => p.step_id).sort()).toEqual(gone);
    for (const cf of [d, ref]) await cf.close({ compact: false });
  });
});

describe('the derived index serves scans without reading nodes', () => {
  it('a fresh engine scans both modes with every node file gone; page-in reads only the picks', async () => {
    const dir = await seeded(true);
    const before = await answers(await open(dir));
    const nodes = join(dir, 'cold_nodes');
    const away = join(dir, '..', 'away');
    renameSync(nodes, away);
    mkdirSync(nodes);
    const cf = await open(dir);
    for (const [i, p] of PROMPTS.entries()) {
      expect(await cf.scan(p, { mode: 'ranked' })).toEqual(before[i]!.ranked);
      expect(await cf.scan(p, { mode: 'reference' })).toEqual(before[i]!.reference);
      expect(await cf.recall(p)).toEqual(before[i]!.recall);
    }
    for (const s of before[0]!.pageIn.pages.map((p) => p.step_id)) {
      const f = `step_${String(s).padStart(6, '0')}.json`;
      renameSync(join(away, f), join(nodes, f));
    }
    expect(await cf.pageIn(PROMPTS[0]!)).toEqual(before[0]!.pageIn);
    await cf.close({ compact: false });
  });

  it('a fresh process costs its picks without loading the o200k vocabulary', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await ContextFold.open({ dir, clock: CLOCK });
    await cf.foldMany(TURNS);
    await cf.close();
    const script = `
      import { createRequire } from 'node:module';
      const { ContextFold } = await import(${JSON.stringify(ENGINE)});
      const cf = await ContextFold.open({ dir: ${JSON.stringify(dir)} });
      const r = await cf.scan('Which port is postgresql listening on?', { mode: 'reference' });
      const k = await cf.scan('Which port is postgresql listening on?', { mode: 'ranked' });
      const p = await cf.pageIn('Which port is postgresql listening on?');
      const loaded = Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('o200k'));
      console.log(JSON.stringify({ loaded, r: r.selected.map((s) => [s.step_id, s.cost]), k: k.selected[0].step_id, page: p.pages[0].tokens }));`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(out.stderr).toBe('');
    const r = JSON.parse(out.stdout) as {
      loaded: boolean;
      r: [number, number][];
      k: number;
      page: number;
    };
    expect(r.loaded).toBe(false);
    expect(r.k).toBe(2);
    // The stored count is the o200k count of the whole payload.
    const again = await ContextFold.open({ dir });
    expect(r.page).toBe(again.tokenizer.count('postgresql listening on port 5433'));
    expect(r.r[0]).toEqual([2, r.page]);
    await again.close();
  });

  it('a node that fails verification is ranked on its entry terms, refused, and never stored', async () => {
    const dir = await seeded(true);
    for (const f of indexFiles(dir)) rmSync(join(dir, f)); // every node to analyse again
    const p = join(dir, 'cold_nodes', 'step_000002.json');
    writeFileSync(p, readFileSync(p, 'utf8').replace('port 5433', 'port 6666'));
    for (let round = 0; round < 2; round++) {
      const cf = await open(dir);
      const r = await cf.pageIn('Which port is postgresql listening on?');
      expect(r.pages.some((x) => x.step_id === 2 || x.content.includes('6666'))).toBe(false);
      expect(r.failures).toEqual([
        expect.objectContaining({ step_id: 2, error: 'IntegrityCheckError' }),
      ]);
      // Its analysis is not kept: the next process verifies it again.
      expect((await cf.status()).index?.pending_analysis).toBe(1);
      await cf.close({ compact: false });
    }
  });

  it('writes nothing outside the store (no ~/.cache, no machine-wide state)', async () => {
    const home = join(tempDir().dir, 'home');
    const dir = join(tempDir().dir, '.contextfold');
    const env = {
      ...process.env,
      HOME: home,
      XDG_CACHE_HOME: join(home, 'xdg'),
      CONTEXTFOLD_CACHE_DIR: join(home, 'cf'),
    };
    const run = (args: string[]) =>
      spawnSync(process.execPath, [CLI, '--dir', dir, ...args], { env, encoding: 'utf8' });
    const payload = join(dir, '..', 'p.txt');
    writeFileSync(payload, 'postgresql listening on port 5433');
    expect(run(['fold', '2', 'tool: result', '--file', payload]).status).toBe(0);
    expect(run(['scan', 'which port for postgresql?']).status).toBe(0);
    expect(run(['--retrieval', 'reference', 'scan', 'which port for postgresql?']).status).toBe(0);
    expect(existsSync(home)).toBe(false);
  });
});

/** Every file and directory under `dir` with its size, mtime and (for files) bytes. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }).map(String).sort()) {
    const p = join(dir, name);
    const st = statSync(p);
    out[name] = st.isDirectory()
      ? `dir ${st.mtimeMs}`
      : `${st.size} ${st.mtimeMs} ${readFileSync(p).toString('base64')}`;
  }
  out['.'] = `dir ${statSync(dir).mtimeMs}`;
  return out;
}

describe('readOnly: true', () => {
  for (const [name, prepare] of [
    ['a current index', async (_dir: string) => {}],
    [
      'no index',
      async (dir: string) => {
        for (const f of indexFiles(dir)) rmSync(join(dir, f));
      },
    ],
    [
      'an index behind its journal',
      async (dir: string) => {
        const file = indexDb(dir);
        const older = readFileSync(file);
        const cf = await open(dir);
        await cf.fold({ stepId: 90, summary: 'late', content: 'port 7777 for the late service' });
        await cf.close({ compact: false });
        writeFileSync(file, older); // the index as it was before that fold
      },
    ],
  ] as const) {
    it(`writes nothing into the store (${name}): same answers from a private index`, async () => {
      const dir = await seeded(true);
      await prepare(dir);
      const expected = await answers(await open(dir, { readOnly: true }));
      expect((await (await open(dir, { readOnly: true })).status()).nodes).toBe(
        TURNS.length + (name === 'an index behind its journal' ? 1 : 0),
      );
      const before = tree(dir);
      const cf = await open(dir, { readOnly: true });
      expect(await answers(cf)).toEqual(expected);
      expect((await cf.validate()).ok).toBe(true);
      await expect(cf.fold({ stepId: 99, summary: 's', content: 'c' })).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringMatching(/opened read-only/),
      });
      await cf.close();
      expect(tree(dir)).toEqual(before);
      const writer = await open(dir);
      expect(await answers(writer)).toEqual(expected);
      await writer.close({ compact: false });
    });
  }
});

describe('readOnly: true, on a closed store', () => {
  it('reads the index file in place (a writer leaves it in rollback mode): nothing created, same answers', async () => {
    const dir = await seeded(true);
    const first = await open(dir);
    const expected = await answers(first);
    await first.close({ compact: false });
    const file = indexDb(dir);
    expect(readFileSync(file).subarray(18, 20)).toEqual(Buffer.from([1, 1])); // rollback mode
    const before = tree(dir);
    const cf = await open(dir, { readOnly: true });
    expect(await answers(cf)).toEqual(expected);
    const st = await cf.status();
    expect(st.index).toMatchObject({ path: file, state: 'fresh' });
    expect(tree(dir)).toEqual(before); // no -wal, no -shm, no byte changed
    // A writer opens it meanwhile (back to WAL) and folds: the reader follows, still writing
    // nothing of its own.
    const writer = await open(dir);
    await writer.fold({ stepId: 90, summary: 'late', content: 'port 7777 for the late service' });
    expect((await cf.status()).nodes).toBe(TURNS.length + 1);
    expect((await cf.scan('port 7777 late service')).selected.map((p) => p.step_id)).toContain(90);
    await writer.close();
    await cf.close();
    expect(readFileSync(indexDb(dir)).subarray(18, 20)).toEqual(Buffer.from([2, 2])); // reader open
  });

  it('a store a writer holds open (WAL beside the file): a private index, nothing created', async () => {
    const dir = await seeded(false);
    const writer = await open(dir);
    await writer.fold({ stepId: 90, summary: 'late', content: 'port 7777 for the late service' });
    expect(existsSync(`${indexDb(dir)}-wal`)).toBe(true);
    const before = tree(dir);
    const cf = await open(dir, { readOnly: true });
    const st = await cf.status();
    expect([st.nodes, st.index?.state]).toEqual([TURNS.length + 1, 'in-memory']);
    await cf.close();
    expect(tree(dir)).toEqual(before);
    await writer.close({ compact: false });
  });

  it('reads a private in-memory copy of a WAL-mode index file, not a rebuild from the JSON', async () => {
    const dir = await seeded(false);
    // As a writer that could not switch it back (another connection was open) leaves it.
    const db = new Database(indexDb(dir));
    db.pragma('journal_mode = WAL');
    db.close();
    expect(readFileSync(indexDb(dir)).subarray(18, 20)).toEqual(Buffer.from([2, 2])); // WAL
    // Only the derived index knows the nodes' sanitized flags once their files are gone: a
    // rebuild from recall_index.json would count every node unreadable.
    for (const f of readdirSync(join(dir, 'cold_nodes'))) rmSync(join(dir, 'cold_nodes', f));
    const before = tree(dir);
    const cf = await open(dir, { readOnly: true });
    const st = await cf.status();
    expect([st.nodes, st.sanitized_nodes, st.unreadable_nodes]).toEqual([
      TURNS.length,
      TURNS.length,
      0,
    ]);
    await cf.close();
    expect(tree(dir)).toEqual(before);
  });
});

/** Makes a directory unwritable even for root (chattr +i), else by mode; null if impossible. */
function makeReadOnly(dir: string): (() => void) | null {
  if (process.getuid?.() === 0) {
    const r = spawnSync('chattr', ['+i', dir]);
    if (r.status !== 0) return null;
    return () => spawnSync('chattr', ['-i', dir]);
  }
  const mode = statSync(dir).mode;
  chmodSync(dir, 0o555);
  return () => chmodSync(dir, mode);
}

describe('a store directory that is not writable', () => {
  it('reads work from an in-memory index (one warning); writes fail with one clear line', async (ctx) => {
    const dir = await seeded(true);
    const before = await answers(await open(dir));
    const undo = makeReadOnly(dir);
    if (!undo) return ctx.skip('cannot make a directory read-only here (no chattr as root)');
    try {
      const { warnings, onWarning } = collect();
      const cf = await open(dir, { onWarning });
      expect(await answers(cf)).toEqual(before);
      expect(warnings.map((w) => w.code)).toEqual(['INDEX_IN_MEMORY']);
      await expect(cf.fold({ stepId: 50, summary: 's', content: 'c' })).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringMatching(/store directory is not writable/),
      });
      const payload = join(tempDir().dir, 'p.txt');
      writeFileSync(payload, 'bytes');
      const r = spawnSync(
        process.execPath,
        [CLI, '--dir', dir, 'fold', '50', 's', '--file', payload],
        {
          encoding: 'utf8',
        },
      );
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          /^contextfold: UsageError: store directory is not writable .*check its permissions/,
        ),
      ]);
      await cf.close({ compact: false });
    } finally {
      undo();
    }
  });

  it('a --dir that cannot be created (under a regular file): one clear line, exit 1, nothing written', () => {
    const root = tempDir().dir;
    writeFileSync(join(root, 'file'), 'not a directory');
    const dir = join(root, 'file', '.contextfold');
    const payload = join(root, 'p.txt');
    writeFileSync(payload, 'bytes');
    for (const json of [false, true]) {
      const r = spawnSync(
        process.execPath,
        [CLI, '--dir', dir, ...(json ? ['--json'] : []), 'fold', '1', 's', '--file', payload],
        { encoding: 'utf8' },
      );
      expect(r.status).toBe(1);
      if (json) {
        expect(JSON.parse(r.stdout)).toMatchObject({ error: 'UsageError', code: 'USAGE' });
      } else {
        expect(r.stderr.trim().split('\n')).toEqual([
          expect.stringMatching(
            /^contextfold: UsageError: store directory .*file\/\.contextfold is \(or is under\) a file: choose another --dir$/,
          ),
        ]);
      }
    }
    expect(readdirSync(root).sort()).toEqual(['file', 'p.txt']);
  });
});

describe('the most frequent extensions of a prefix (topTermsWithPrefix)', () => {
  it('are the extensions ranked by frequency, ties in code-point order, within the length', async () => {
    const dir = join(tempDir().dir, '.contextfold');
    const cf = await open(dir);
    // deploya… deployn in 1…14 turns each, and extensions with multi-byte and astral letters.
    const words = Array.from({ length: 14 }, (_, i) => `deploy${String.fromCharCode(97 + i)}`);
    const odd = ['deployé', 'deployz', 'deploy𝒳', 'deployments', 'deployeverything'];
    await cf.foldMany(
      Array.from({ length: 14 }, (_, s) => ({
        stepId: s,
        summary: `turn ${s}`,
        content: [...words.slice(s), ...odd.slice(0, 1 + (s % odd.length))].join(' '),
      })),
    );
    const cp = (t: string) => [...t].length;
    const expected = (maxLength: number, limit: number) =>
      cf.backend
        .termsWithPrefix('ranked', 'deploy')
        .filter((t) => cp(t) <= maxLength)
        .sort((a, b) => {
          const d = cf.backend.df('ranked', b) - cf.backend.df('ranked', a);
          return d !== 0 ? d : a < b ? -1 : a > b ? 1 : 0;
        })
        .slice(0, limit);
    // UTF-16 order and code-point order differ only past U+FFFF: the expected list must hold one.
    expect(cf.backend.termsWithPrefix('ranked', 'deploy')).toContain('deploy𝒳');
    for (const [maxLength, limit] of [
      [7, 3],
      [7, 40],
      [11, 8],
      [40, 40],
      [6, 5],
    ] as const) {
      const top = cf.backend.topTermsWithPrefix('ranked', 'deploy', maxLength, limit);
      expect(top, `${maxLength}/${limit}`).toEqual(expected(maxLength, limit));
    }
    // A fold moves the ranking: the cached answer follows.
    const before = cf.backend.topTermsWithPrefix('ranked', 'deploy', 7, 1);
    await cf.foldMany(
      Array.from({ length: 30 }, (_, i) => ({ stepId: 100 + i, summary: 's', content: 'deployz' })),
    );
    expect(before).not.toEqual(['deployz']);
    expect(cf.backend.topTermsWithPrefix('ranked', 'deploy', 7, 1)).toEqual(['deployz']);
    // The batch answers what each lookup answers, cached (asked above) or not, and follows folds.
    const asks = [
      { prefix: 'deploy', maxLength: 7 },
      { prefix: 'deploy', maxLength: 40 },
      { prefix: 'deplo', maxLength: 8 },
      { prefix: 'nothing', maxLength: 9 },
      { prefix: 'deploy\ud800', maxLength: 9 },
    ];
    const batch = () => cf.backend.topTermsWithPrefixMany!('ranked', asks, 3);
    const singles = () =>
      asks.map((a) => cf.backend.topTermsWithPrefix('ranked', a.prefix, a.maxLength, 3));
    expect(batch()).toEqual(singles());
    await cf.foldMany(
      Array.from({ length: 40 }, (_, i) => ({ stepId: 200 + i, summary: 's', content: 'deployé' })),
    );
    expect(batch()[0]![0]).toBe('deployé');
    expect(batch()).toEqual(singles());
    await cf.close({ compact: false });
  });
});
