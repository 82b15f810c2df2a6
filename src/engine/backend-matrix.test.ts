import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { IndexWarning } from '../store/index-backend.js';
import { BACKENDS, type BackendName, PG_URL, storeFor } from '../test-utils/pg.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';
import type { FoldInput, OpenOptions } from './types.js';

// Main's backend operations (drop, reportBroken, block statistics) on every backend.

const TURNS: FoldInput[] = [
  { stepId: 0, summary: 'user: set up', content: 'Please set up the database and run the tests.' },
  { stepId: 1, summary: 'tool: result', content: 'postgresql listening on port 5433' },
  {
    stepId: 2,
    summary: 'tool: result',
    content: `${'compiling\n'.repeat(50)}Finished in 2.1 seconds\n41 tests, 3 failures\n`,
  },
  { stepId: 3, summary: 'tool: result', content: 'redis ready on 127.0.0.1:6380 (pid 4242)' },
  ...Array.from({ length: 12 }, (_, i) => ({
    stepId: 4 + i,
    summary: 'assistant: note',
    content: `remark ${i} about widget${i % 3} on port ${6000 + i}`,
  })),
];

const PROMPTS = [
  'Which port is postgresql listening on?',
  'how many tests failed?',
  'what pid does redis have?',
  'widget1 port',
];

const CLOCK = () => new Date('2026-01-01T00:00:00Z');

function open(store: string, extra: Partial<OpenOptions> = {}) {
  return ContextFold.open({ store, tokenizer: 'reference', clock: CLOCK, ...extra });
}

async function answers(cf: ContextFold) {
  const out = [];
  for (const p of PROMPTS) {
    out.push({
      ranked: await cf.scan(p, { mode: 'ranked' }),
      reference: await cf.scan(p, { mode: 'reference' }),
      recall: await cf.recall(p),
    });
  }
  return out;
}

/** What a fresh engine (a new process's index) answers. */
async function fresh(store: string) {
  const cf = await open(store);
  try {
    return {
      answers: await answers(cf),
      ranked: cf.backend.fieldStats('ranked'),
      reference: cf.backend.fieldStats('reference'),
      status: await cf.status(),
    };
  } finally {
    await cf.close({ compact: false });
  }
}

function storeOf(backend: BackendName, label: string): string {
  return storeFor(backend, join(tempDir().dir, '.contextfold'), label);
}

describe.each(BACKENDS)('backend operations on %s', (backend) => {
  it('topTermsWithPrefixMany answers what topTermsWithPrefix answers for each prefix', async () => {
    const cf = await open(storeOf(backend, 'topmany'));
    await cf.foldMany([
      ...TURNS,
      { stepId: 90, summary: 's', content: 'portal ports portability port\u0001x' },
    ]);
    const asks = ['port', 'post', 'pos', 'nothing', 'port\u0001', '\ud800'].flatMap((prefix) =>
      [5, 8, 20].map((maxLength) => ({ prefix, maxLength })),
    );
    const singles = (limit: number) =>
      asks.map((a) => cf.backend.topTermsWithPrefix('ranked', a.prefix, a.maxLength, limit));
    for (const limit of [1, 2, 32]) {
      expect(cf.backend.topTermsWithPrefixMany!('ranked', asks, limit)).toEqual(singles(limit));
    }
    expect(singles(32).some((t) => t.length > 1)).toBe(true);
    await cf.close({ compact: false });
  });

  it('block statistics: parts, their length and the last analysed step', async () => {
    const store = storeOf(backend, 'stats');
    const cf = await open(store);
    await cf.foldMany(TURNS);
    await answers(cf); // analyses every node
    const ranked = cf.backend.fieldStats('ranked');
    expect(ranked.docs).toBe(TURNS.length);
    expect(ranked.lastStep).toBe(TURNS.length - 1);
    expect(ranked.parts).toBeGreaterThanOrEqual(TURNS.length);
    expect(ranked.partLength).toBeGreaterThan(0);
    expect(cf.backend.fieldStats('reference')).toMatchObject({
      docs: TURNS.length,
      parts: 0,
      partLength: 0,
      lastStep: -1,
    });
    await cf.close({ compact: false });
    // Stored with the analyses: a fresh index has the same figures without re-analysing.
    const f = await fresh(store);
    expect(f.ranked).toEqual(ranked);
  });

  it('drop removes an entry everywhere; other engines, old and new, answer as without it', async () => {
    const store = storeOf(backend, 'drop');
    const a = await open(store);
    await a.foldMany(TURNS);
    await a.evict(3);
    await answers(a);
    const b = await open(store);
    await answers(b); // a long-lived reader with a warm cache
    const before = a.backend.fieldStats('ranked');
    const dropped = await a.dropEntry(3, 'test: node untrustworthy');
    expect(dropped).toEqual({ step_id: 3, dropped_at: '2026-01-01T00:00:00Z' });
    await a.dropEntry(1, 'test: node gone');
    expect(await a.entry(3)).toBeUndefined();
    const st = await a.status();
    expect(st.nodes).toBe(TURNS.length - 2);
    expect(st.evicted).toBe(0);
    const after = a.backend.fieldStats('ranked');
    expect(after.docs).toBe(before.docs - 2);
    expect(after.parts).toBeLessThan(before.parts);
    expect(after.totalLength).toBeLessThan(before.totalLength);
    expect(a.backend.evictions()).toEqual([]);
    const mine = await answers(a);
    for (const x of mine) {
      const steps = [...x.ranked.selected, ...x.reference.selected].map((s) => s.step_id);
      expect(steps).not.toContain(1);
      expect(steps).not.toContain(3);
    }
    // Another engine opened before the drop follows it; a fresh one agrees.
    expect(await answers(b)).toEqual(mine);
    expect(await b.entry(1)).toBeUndefined();
    const f = await fresh(store);
    expect(f.answers).toEqual(mine);
    expect(f.ranked).toEqual(after);
    expect(f.status.nodes).toBe(st.nodes);
    // The step can be dropped once only; a later fold of new steps is followed by both.
    await expect(a.dropEntry(3, 'again')).rejects.toThrow(/3/);
    await a.fold({ stepId: 40, summary: 'tool: result', content: 'memcached on port 11311' });
    expect((await b.scan('memcached port', { mode: 'ranked' })).selected[0]?.step_id).toBe(40);
    await a.close({ compact: false });
    await b.close({ compact: false });
  });
});

describe.each(BACKENDS.filter((b) => b === 'postgres'))('stored analyses on %s', (backend) => {
  it('one that does not decode is never ranked with: rebuilt from the nodes, fixed in the database', async () => {
    const store = storeOf(backend, 'broken');
    const first = await open(store);
    await first.foldMany(TURNS);
    const before = await answers(first);
    const stats = first.backend.fieldStats('ranked');
    await first.close({ compact: false });
    const storeId = new URL(store).searchParams.get('store_id');
    const db = new pg.Client({ connectionString: PG_URL! });
    await db.connect();
    try {
      const r = await db.query(
        "UPDATE cf_analyses SET features = 'not an analysis' WHERE store_id = $1",
        [storeId],
      );
      expect(r.rowCount).toBeGreaterThan(0);
      const warnings: IndexWarning[] = [];
      const cf = await open(store, { onWarning: (w) => warnings.push(w) });
      expect(await answers(cf)).toEqual(before);
      expect(warnings.map((w) => w.code)).toEqual(['INDEX_REBUILT']);
      expect(warnings[0]!.message).toContain('does not decode');
      expect(cf.backend.fieldStats('ranked')).toEqual(stats);
      await cf.close({ compact: false });
      // Nothing damaged was kept: the recomputed analyses are what the database now holds.
      const bad = await db.query(
        "SELECT count(*)::int AS n FROM cf_analyses WHERE store_id = $1 AND features = 'not an analysis'",
        [storeId],
      );
      expect(bad.rows[0].n).toBe(0);
      const warnings2: IndexWarning[] = [];
      const again = await open(store, { onWarning: (w) => warnings2.push(w) });
      expect(await answers(again)).toEqual(before);
      expect(warnings2).toEqual([]);
      await again.close({ compact: false });
    } finally {
      await db.end();
    }
  });
});
