import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScanPick, ScanResult } from '../protocol/results.js';
import { RANKED_DEFAULTS } from '../retrieval/ranked-scan.js';
import { type TestStore, testStore } from '../test-utils/backend-store.js';
import { BACKENDS, type BackendName } from '../test-utils/pg.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { ContextFold } from './context-fold.js';
import { RankedRetrieval } from './ranked-retrieval.js';
import type { FoldInput } from './types.js';

const filler = (k: number) =>
  Array.from({ length: k }, (_, i) => `progress line ${i}: compiling module m${i}`).join('\n');

// A session in the shape agents write: calls, results, narration, one huge log.
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
    content: `${filler(600)}\nFinished in 2.1 seconds\n41 tests, 3 failures\n${filler(50)}`,
  },
  {
    stepId: 5,
    summary: 'assistant: note',
    content: 'Three billing tests fail; I will look at them.',
  },
  ...Array.from({ length: 10 }, (_, i) => ({
    stepId: 6 + i,
    summary: 'assistant: note',
    content: `unrelated remark ${i} about styling widget${i}`,
  })),
];

// On each backend: ranking is computed in the engine from the same stored analyses.
describe.each(BACKENDS)('ranked retrieval in the engine on %s', (backend: BackendName) => {
  let last: TestStore;
  const freshDir = () => {
    last = testStore(backend, 'ranked');
    return last.where;
  };
  async function seeded(dir = freshDir()) {
    const cf = await ContextFold.open({ dir, retrieval: 'ranked' });
    await cf.foldMany(TURNS);
    return cf;
  }

  it('pages the window of a large turn that holds the answer, within the caps', async () => {
    const cf = await seeded();
    const r = await cf.pageIn('How many billing tests failed in the last run?');
    const page = r.pages.find((p) => p.step_id === 4);
    expect(page?.content).toContain('41 tests, 3 failures');
    expect(page?.truncated).toBe(true);
    expect(page?.window).toMatchObject({ lines: 652 });
    // The reference pages the head of the same turn and misses the answer.
    const ref = await cf.pageIn('How many billing tests failed in the last run?', {
      mode: 'reference',
    });
    expect(ref.pages.some((p) => p.content.includes('41 tests, 3 failures'))).toBe(false);
    expect(r.tokens).toBeLessThanOrEqual(3500);
    for (const p of r.pages) {
      expect(p.tokens).toBeLessThanOrEqual(3000);
      expect(p.tokens).toBe(cf.tokenizer.count(p.content));
    }
    await cf.close();
  });

  it('every page is verified: a tampered turn is refused and reported, never paged', async () => {
    const cf = await seeded();
    await last.editNode(2, (t) => t.replace('port 5433', 'port 6666'));
    const r = await cf.pageIn('Which port is postgresql listening on?');
    expect(r.pages.map((x) => x.step_id)).not.toContain(2);
    expect(r.pages.some((x) => x.content.includes('6666'))).toBe(false);
    expect(r.failures).toEqual([
      expect.objectContaining({ step_id: 2, error: 'IntegrityCheckError' }),
    ]);
    await cf.close();
  });

  it('a store opened later is indexed from its verified nodes: same pages', async () => {
    const cf = await seeded();
    const prompt = 'Which port is postgresql listening on?';
    const before = await cf.pageIn(prompt);
    await cf.close();
    const again = await ContextFold.open({ dir: cf.dir, retrieval: 'ranked' });
    const after = await again.pageIn(prompt);
    expect(after.pages).toEqual(before.pages);
    expect(after.pages[0]?.content).toContain('port 5433');
    await again.close();
  });

  it('retrieval keys never touch the hashed projection', async () => {
    const ranked = await seeded();
    const reference = await ContextFold.open({ dir: freshDir(), retrieval: 'reference' });
    await reference.foldMany(TURNS);
    const a = await ranked.entries();
    const b = await reference.entries();
    expect(a.map((e) => e.projection_sha256)).toEqual(b.map((e) => e.projection_sha256));
    expect(a.map((e) => e.identifiers)).toEqual(b.map((e) => e.identifiers));
    await ranked.close();
    await reference.close();
  });

  it('a scan sees the turns folded since the last scan, by this process or another', async () => {
    const cf = await seeded();
    // The turns the first scans read stay numbered in the process; the new ones join them.
    const prompt = 'Which port is the redis cache listening on?';
    expect((await cf.scan(prompt)).selected.map((p) => p.step_id)).not.toContain(16);
    await cf.scan('Which port is postgresql listening on?');
    await cf.fold({
      stepId: 16,
      summary: 'tool: result',
      content: 'redis cache listening on 6380',
    });
    expect((await cf.scan(prompt)).selected[0]?.step_id).toBe(16);
    const other = await ContextFold.open({ dir: cf.dir, retrieval: 'ranked' });
    await other.fold({ stepId: 17, summary: 'tool: result', content: 'redis cache moved to 6390' });
    await other.close();
    const moved = 'Which port did the redis cache move to?';
    expect((await cf.scan(moved)).selected[0]?.step_id).toBe(17);
    expect((await cf.scan('Which port is postgresql listening on?')).selected[0]?.step_id).toBe(2);
    await cf.close();
  });

  it('scan({ mode }) selects the algorithm per call', async () => {
    const cf = await ContextFold.open({ dir: freshDir() });
    await cf.foldMany(TURNS);
    const prompt = 'Which port is postgresql listening on?';
    const ranked = await cf.scan(prompt, { mode: 'ranked' });
    const reference = await cf.scan(prompt, { mode: 'reference' });
    expect(ranked.selected[0]?.step_id).toBe(2);
    expect(Object.keys(reference).sort()).toEqual(['budget_dropped', 'query_terms', 'selected']);
    await cf.close();
  });

  it('a ranked result carries only fields ScanResult and ScanPick declare, typed', async () => {
    const cf = await seeded();
    const r: ScanResult = await cf.scan('Which port is postgresql listening on?');
    // `keyof` lists: a name the types do not declare fails the typecheck, a field the scan
    // returns that they do not list fails here.
    const resultKeys: (keyof ScanResult)[] = [
      'query_terms',
      'dropped_terms',
      'intent',
      'selected',
      'budget_dropped',
      'live_owners',
    ];
    const pickKeys: (keyof ScanPick)[] = [
      'step_id',
      'matched_terms',
      'cost',
      'status',
      'score',
      'probability',
      'focus',
      'block',
      'companion_of',
      'alternative_of',
    ];
    for (const k of Object.keys(r)) expect(resultKeys).toContain(k);
    const picks = [...r.selected, ...r.budget_dropped];
    for (const k of picks.flatMap((p) => Object.keys(p))) expect(pickKeys).toContain(k);
    expect(r.intent).toEqual({ time: 'none', error: false });
    const top = r.selected[0]!;
    expect(top.focus?.[0]).toEqual({ key: expect.any(String), weight: expect.any(Number) });
    expect(top.block!.end_line).toBeGreaterThan(top.block!.start_line);
    await cf.close();
  });
});

/**
 * A fresh engine (nothing cached in the process yet) over `n` folded build results that all
 * share the prompt's words: `job-0642` (its number) names one of them.
 */
async function buildJobs(n: number): Promise<ContextFold> {
  const dir = join(tempDir().dir, '.contextfold');
  const writer = await ContextFold.open({ dir, retrieval: 'ranked' });
  await writer.foldMany(
    Array.from({ length: n }, (_, i) => ({
      stepId: i,
      summary: 'tool: result',
      content: `widget build job-${String(i).padStart(4, '0')} finished: ${i % 50} warnings in src/widget${i % 7}.ts`,
    })),
  );
  await writer.close({ compact: false });
  return ContextFold.open({ dir, retrieval: 'ranked' });
}

describe('what a ranked scan reads', () => {
  it('the analyses of the turns it scores in full only, however many turns hold the key', async () => {
    const cf = await buildJobs(700);
    const store = cf.backend;
    const numbered = new Set<number>();
    const detailed = new Set<number>();
    const reads: number[] = [];
    const docStats = store.docStats.bind(store);
    const docDetails = store.docDetails.bind(store);
    store.docStats = (steps) => {
      for (const s of steps) numbered.add(s);
      return docStats(steps);
    };
    store.docDetails = (steps, tokenizer) => {
      for (const s of steps) detailed.add(s);
      reads.push(steps.length);
      return docDetails(steps, tokenizer);
    };
    const r = await cf.scan('How many warnings did the widget build job-0642 report?');
    expect(r.selected[0]?.step_id).toBe(642);
    expect(numbered.size).toBeGreaterThan(RANKED_DEFAULTS.maxCandidates + 100);
    // Full features for at most maxCandidates turns; a pick's call turn may be read besides.
    expect(detailed.size).toBeLessThanOrEqual(
      RANKED_DEFAULTS.maxCandidates + RANKED_DEFAULTS.maxPages,
    );
    for (const p of r.selected) expect(detailed.has(p.step_id)).toBe(true);
    // The candidates' rows in one query, not one each (a pick's call turn may come after).
    expect(reads[0]).toBe(RANKED_DEFAULTS.maxCandidates);
    expect(reads.length).toBeLessThanOrEqual(1 + RANKED_DEFAULTS.maxPages);
    await cf.close({ compact: false });
  });
});

describe('the rows of the turns a scan scores in full (docDetails)', () => {
  it('come in one query, only for analysed turns, with the stored token counts asked for', async () => {
    const cf = await buildJobs(30);
    await cf.backend.sync();
    const name = cf.tokenizer.name;
    const rows = cf.backend.docDetails([5, 3, 999_999], name);
    expect(rows.map((r) => r.step).sort((a, b) => a - b)).toEqual([3, 5]);
    for (const r of rows) {
      expect(r.tokens).toBeGreaterThan(0);
      expect(r.tokens).toBe(cf.backend.tokens(r.payload_sha256, name));
      expect(r.payload_sha256).toBe(cf.backend.get(r.step)!.payload_sha256);
    }
    // Without a tokenizer, or with one nothing is stored for, no count.
    expect(cf.backend.docDetails([3])[0]).not.toHaveProperty('tokens');
    expect(cf.backend.docDetails([3], 'no-such-tokenizer')[0]).not.toHaveProperty('tokens');
    await cf.close({ compact: false });
  });
});

describe('the analyses a process keeps decoded', () => {
  it('are bounded: past the bound the oldest are read and decoded again, with the same answer', async () => {
    const cf = await buildJobs(400);
    await cf.backend.sync();
    const details: number[] = [];
    const docDetails = cf.backend.docDetails.bind(cf.backend);
    cf.backend.docDetails = (steps, tokenizer) => {
      details.push(...steps);
      return docDetails(steps, tokenizer);
    };
    const deps = {
      tokenizer: cf.tokenizer,
      backend: cf.backend,
      verifiedText: () => '',
      entryOf: (step: number) => cf.backend.get(step),
      tokensOf: () => 7,
      knownTokens: () => 7,
    };
    const prompt = 'How many warnings did the widget build job-0342 report?';
    const caps = { perCall: 3000, perTurn: 3500 };
    const twice = (r: RankedRetrieval) => {
      const first = r.scan(prompt, caps);
      const before = details.length;
      const second = r.scan(prompt, caps);
      return { first, second, reread: details.length - before };
    };
    const kept = twice(new RankedRetrieval(deps));
    expect(kept.first.selected[0]?.step_id).toBe(342);
    expect(kept.reread).toBe(0);
    const bounded = twice(new RankedRetrieval(deps, {}, { maxDecoded: 20 }));
    expect(bounded.reread).toBeGreaterThan(100);
    expect(bounded.second).toEqual(kept.first);
    expect(bounded.first).toEqual(kept.first);
    await cf.close({ compact: false });
  });
});

describe('the catch-up of nodes without an analysis (RankedRetrieval.prepare)', () => {
  const N = 120;
  /** A store of N folded turns whose index was rebuilt from its files: every node pending. */
  async function pendingStore() {
    const dir = join(tempDir().dir, '.contextfold');
    const writer = await ContextFold.open({ dir });
    await writer.foldMany(
      Array.from({ length: N }, (_, i) => ({
        stepId: i,
        summary: `note ${i}`,
        content: `remark ${i} about widget${i % 7}`,
      })),
    );
    await writer.close();
    for (const f of readdirSync(dir)) if (f.startsWith('index-')) rmSync(join(dir, f));
    const cf = await ContextFold.open({ dir });
    await cf.status(); // the index is rebuilt from the store's files, without analyses
    expect(cf.backend.pendingCount()).toBe(N);
    return cf;
  }

  function retrieval(cf: ContextFold, failAt?: number) {
    const reads: number[] = [];
    const r = new RankedRetrieval({
      tokenizer: cf.tokenizer,
      backend: cf.backend,
      verifiedText: (step) => {
        reads.push(step);
        if (step === failAt) throw new Error('the disk went away');
        return `remark ${step} about widget${step % 7}`;
      },
      entryOf: (step) => cf.backend.get(step),
      tokensOf: () => 7,
      knownTokens: () => 7,
    });
    return { r, reads };
  }

  it('keeps what it analysed when a read fails midway', async () => {
    const cf = await pendingStore();
    const { r } = retrieval(cf, 100);
    await expect(r.prepare()).rejects.toThrow('the disk went away');
    expect(cf.backend.pendingCount()).toBe(N - 100);
    await cf.close({ compact: false });
  });

  it('two callers at once analyse each node once', async () => {
    const cf = await pendingStore();
    const { r, reads } = retrieval(cf);
    await Promise.all([r.prepare(), r.prepare()]);
    expect(cf.backend.pendingCount()).toBe(0);
    expect(reads).toHaveLength(N);
    expect(new Set(reads).size).toBe(N);
    await cf.close({ compact: false });
  });
});
