import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IndexEntry } from '../protocol/types.js';
import { InvertedIndex } from './inverted-index.js';
import { type RankedDoc, RankedIndex } from './ranked-index.js';
import { parseQuery, queryOf } from './ranked-query.js';
import { RANKED_DEFAULTS, rankedScan } from './ranked-scan.js';
import { DocNumbering, type RankedSource, rankedView } from './ranked-view.js';
import { recall } from './recall.js';
import { referenceScan } from './reference-scan.js';
import { TermView } from './term-view.js';

const WORDS = [
  'port',
  'postgres',
  'postgresql',
  'redis',
  'billing',
  'deploy',
  'error',
  'failed',
  'config',
  'configuration',
  'tests',
  'v1.2.3',
  'src/app.ts',
  'KeyError',
  '5433',
  'abc1234',
];

/** Turns in step order (the order a persistent index keeps its postings in). */
const turns = fc
  .array(
    fc.record({
      words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 12 }),
      tokens: fc.integer({ min: 1, max: 4000 }),
    }),
    { minLength: 1, maxLength: 40 },
  )
  .map((ts) =>
    ts.map((t, i) => ({ step: i + Math.floor(i / 5), text: t.words.join(' '), tokens: t.tokens })),
  );

const prompt = fc
  .array(fc.constantFrom(...WORDS, 'which', 'now', 'first', 'why', 'version', 'hash'), {
    minLength: 1,
    maxLength: 6,
  })
  .map((w) => `${w.join(' ')}?`);

/** A RankedSource over an in-memory index (as the store's tables would answer). */
function sourceOf(index: RankedIndex): RankedSource {
  const stepOf = (docNo: number) => index.doc(docNo).stepId;
  let blocks = 0;
  let blockLength = 0;
  for (let d = 0; d < index.size; d++) {
    for (const b of index.doc(d).blocks) {
      blocks++;
      blockLength += b.length;
    }
  }
  return {
    size: index.size,
    blocks,
    blockLength,
    lastStep: index.lastStep,
    docFrequency: (k) => index.docFrequency(k),
    keysWithPrefix: (p) => index.extensions(p),
    recentPostings: (k, limit) => {
      const p = index.postings(k) ?? { docs: [], tfs: [] };
      const from = Math.max(0, p.docs.length - limit);
      return { steps: p.docs.slice(from).map(stepOf), tfs: p.tfs.slice(from) };
    },
    docs: (steps) =>
      steps.map((s): RankedDoc | undefined => {
        const d = index.docOf(s);
        return d === undefined ? undefined : index.doc(d);
      }),
  };
}

/** The same source, answering the query's extensions most frequent first (as SQLite does). */
function topSourceOf(index: RankedIndex): RankedSource {
  const cp = (s: string) => [...s].length;
  return {
    ...sourceOf(index),
    topExtensions: (prefix, maxLength, limit) =>
      index
        .extensions(prefix)
        .filter((k) => cp(k) <= maxLength)
        .sort(
          (a, b) => index.docFrequency(b) - index.docFrequency(a) || (a < b ? -1 : a > b ? 1 : 0),
        )
        .slice(0, limit),
  };
}

/** Words sharing prefixes: more extensions than a query takes, some of them not words. */
const PREFIXED = [
  ...Array.from({ length: 14 }, (_, i) => `deploy${String.fromCharCode(97 + i)}`),
  ...Array.from({ length: 10 }, (_, i) => `deploy_${i}`),
  'deploy\u{1F680}x',
  'config',
  'configured',
  'configuration',
];

describe('rankedView', () => {
  it('a scan over the view of a prompt is the scan over the whole index', () => {
    fc.assert(
      fc.property(turns, prompt, fc.integer({ min: 1, max: 6 }), (ts, p, maxPostings) => {
        const index = new RankedIndex();
        for (const t of ts)
          index.add({ stepId: t.step, summary: '', content: t.text, tokens: t.tokens });
        // A small maxPostings: only the most recent postings of a key count, in both.
        const options = { perTurnCap: 3500, perCallCap: 3000, tuning: { maxPostings } };
        const whole = rankedScan(index, p, options);
        const view = rankedScan(rankedView(sourceOf(index), p, options.tuning), p, options);
        expect(view).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('the scan reads the query the view parsed for its prompt, and parses any other prompt or tuning', () => {
    const index = new RankedIndex();
    index.add({ stepId: 1, summary: '', content: 'postgres port 5433', tokens: 4 });
    index.add({ stepId: 2, summary: '', content: 'postgresql configuration', tokens: 3 });
    const tuning = { ...RANKED_DEFAULTS, maxExtensions: 2 };
    const view = rankedView(sourceOf(index), 'postgres port?', tuning);
    const once = queryOf(view, 'postgres port?', tuning);
    expect(queryOf(view, 'postgres port?', { ...tuning })).toBe(once);
    expect(once).toEqual(parseQuery(index, 'postgres port?', tuning));
    // Another prompt, or a tuning the parse reads, is parsed anew (never the view's query).
    expect(queryOf(view, 'postgres?', tuning)).toEqual(parseQuery(index, 'postgres?', tuning));
    expect(queryOf(view, 'postgres?', tuning).keys).toHaveLength(1);
    const bare = { ...tuning, maxExtensions: 0 };
    const noExtensions = queryOf(view, 'postgres port?', bare);
    expect(noExtensions).toEqual(parseQuery(index, 'postgres port?', bare));
    expect(noExtensions).not.toEqual(once);
    // A field the parse does not read keeps the view's query.
    const fewerCandidates = { ...tuning, maxCandidates: 3 };
    expect(queryOf(view, 'postgres port?', fewerCandidates)).toBe(once);
  });

  it('so is a scan whose steps lie far apart (runs of consecutive steps, gaps of up to a million)', () => {
    // Steps within a range of a million are numbered by an offset array, steps spread wider by
    // a map: both must number the same turns.
    const gap = fc.constantFrom(0, 1, 2, 5_000, 1_000_000);
    fc.assert(
      fc.property(turns, fc.array(gap, { minLength: 40, maxLength: 40 }), prompt, (ts, gaps, p) => {
        const index = new RankedIndex();
        let step = 0;
        ts.forEach((t, i) => {
          step += 1 + gaps[i]!;
          index.add({ stepId: step, summary: '', content: t.text, tokens: t.tokens });
        });
        const options = { perTurnCap: 3500, perCallCap: 3000 };
        const whole = rankedScan(index, p, options);
        expect(rankedScan(rankedView(sourceOf(index), p), p, options)).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('views that share a numbering (a process scanning again) give the same scans, an earlier view, a grown index and reused postings included', () => {
    // Steps from 0 (its call, step -1, is never numbered) to past 2^20 (numbered in a map).
    const gap = fc.constantFrom(0, 1, 2, 5_000, 1_000_000);
    fc.assert(
      fc.property(
        turns,
        fc.array(gap, { minLength: 40, maxLength: 40 }),
        fc.array(prompt, { minLength: 2, maxLength: 4 }),
        fc.integer({ min: 1, max: 39 }),
        (ts, gaps, prompts, cut) => {
          const index = new RankedIndex();
          let step = -1;
          const steps = ts.map((_, i) => {
            step += 1 + gaps[i]!;
            return step;
          });
          const add = (from: number, to: number) => {
            for (let i = from; i < Math.min(to, ts.length); i++) {
              index.add({ stepId: steps[i]!, summary: '', content: ts[i]!.text, tokens: 7 });
            }
          };
          const options = { perTurnCap: 3500, perCallCap: 3000, tuning: { maxPostings: 3 } };
          const numbering = new DocNumbering();
          // The version names the index's state: views of one version reuse mapped postings.
          const shared = () => ({ ...sourceOf(index), numbering, readVersion: `v${index.size}` });
          add(0, cut);
          const views = prompts.map((p) => rankedView(shared(), p, options.tuning));
          // Scanned after every view numbered its documents: the first view last.
          for (let i = views.length - 1; i >= 0; i--) {
            const p = prompts[i]!;
            expect(rankedScan(views[i]!, p, options)).toEqual(rankedScan(index, p, options));
          }
          // Turns folded after the first scans are numbered when a view reads them.
          add(cut, ts.length);
          for (const p of [...prompts, ...prompts]) {
            const view = rankedView(shared(), p, options.tuning);
            expect(rankedScan(view, p, options)).toEqual(rankedScan(index, p, options));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a source that ranks extensions itself (topExtensions) gives the same scans', () => {
    const prefixedTurns = fc.array(
      fc.array(fc.constantFrom(...PREFIXED, ...WORDS), { minLength: 1, maxLength: 10 }),
      { minLength: 1, maxLength: 40 },
    );
    const ask = fc
      .array(fc.constantFrom('deploy', 'config', 'deployment', 'configur', 'port', 'which'), {
        minLength: 1,
        maxLength: 4,
      })
      .map((w) => `${w.join(' ')}?`);
    fc.assert(
      fc.property(prefixedTurns, ask, fc.integer({ min: 0, max: 10 }), (ts, p, maxExtensions) => {
        const index = new RankedIndex();
        ts.forEach((w, i) => {
          index.add({ stepId: i, summary: '', content: w.join(' '), tokens: 10 + i });
        });
        const options = { perTurnCap: 3500, perCallCap: 3000, tuning: { maxExtensions } };
        const whole = rankedScan(rankedView(sourceOf(index), p, options.tuning), p, options);
        const top = rankedScan(rankedView(topSourceOf(index), p, options.tuning), p, options);
        expect(top).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });

  it('a source that reads frequencies together (docFrequencies) gives the same scans, and is asked for none one by one', () => {
    fc.assert(
      fc.property(turns, prompt, (ts, p) => {
        const index = new RankedIndex();
        for (const t of ts) index.add({ stepId: t.step, summary: '', content: t.text, tokens: 5 });
        const options = { perTurnCap: 3500, perCallCap: 3000 };
        const whole = rankedScan(rankedView(topSourceOf(index), p), p, options);
        let alone = 0;
        let together = 0;
        const source: RankedSource = {
          ...topSourceOf(index),
          docFrequency: (k) => {
            alone++;
            return index.docFrequency(k);
          },
          docFrequencies: (keys) => {
            together++;
            return keys.map((k) => index.docFrequency(k));
          },
        };
        expect(rankedScan(rankedView(source, p), p, options)).toEqual(whole);
        expect(alone).toBe(0);
        expect(together).toBeLessThanOrEqual(2);
      }),
      { numRuns: 200 },
    );
  });

  it('so is a scan of turns of several blocks, with a live boundary and lossy turns', () => {
    // Lines of ~300 characters: a turn of several lines spans several blocks (BLOCK_CHARS).
    const line = (w: readonly string[], i: number) =>
      `${w.join(' ')} ${'filler '.repeat(40)}${i}\n`;
    fc.assert(
      fc.property(
        turns,
        prompt,
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 60 }),
        (ts, p, lines, liveFrom) => {
          const index = new RankedIndex();
          for (const t of ts) {
            const text = Array.from({ length: lines }, (_, i) =>
              line(t.text.split(' ').slice(i % 3), i),
            ).join('');
            index.add({ stepId: t.step, summary: 'tool: x', content: text, tokens: t.tokens });
          }
          const lossy = ts.filter((_, i) => i % 7 === 3).map((t) => t.step);
          const options = { perTurnCap: 3500, perCallCap: 3000, liveFrom, lossy };
          const whole = rankedScan(index, p, options);
          const view = rankedScan(rankedView(sourceOf(index), p), p, options);
          expect(view).toEqual(whole);
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('TermView', () => {
  const entryOf = (step: number, words: string[]): IndexEntry =>
    ({
      step_id: step,
      summary: words.slice(0, 2).join(' '),
      identifiers: words.filter((w) => /^[a-z0-9]+$/.test(w)),
      files: words.filter((w) => w.includes('/')),
      errors: words.filter((w) => /Error$/.test(w)),
      folded_at: '2026-01-01T00:00:00Z',
      evicted: false,
      token_estimate: words.length,
    }) as unknown as IndexEntry;

  it('RGSC and recall over the view of a query equal those over the whole index', () => {
    fc.assert(
      fc.property(turns, prompt, (ts, p) => {
        const entries = ts.map((t) => entryOf(t.step, t.text.split(' ')));
        const whole = new InvertedIndex();
        whole.reset(entries);
        const byStep = new Map(entries.map((e) => [e.step_id, e]));
        const view = () =>
          new TermView({
            postings: (term) => {
              const ords = whole.postingsOf(term);
              return [...ords].map((o) => whole.stepAt(o)).sort((a, b) => a - b);
            },
            entry: (s) => byStep.get(s)!,
          });
        const budget = {
          perCall: 30,
          perTurn: 40,
          tokensOf: (s: number) => byStep.get(s)!.token_estimate,
        };
        expect(referenceScan(view(), p, budget)).toEqual(referenceScan(whole, p, budget));
        expect(recall(view(), p)).toEqual(recall(whole, p));
        expect(recall(view(), p, { limit: 2 })).toEqual(recall(whole, p, { limit: 2 }));
      }),
      { numRuns: 300 },
    );
  });

  it('numbers each step once, whatever the step ids and the order terms are read in', () => {
    // Dense ids go through an array, sparse and huge ones (2^24 on) through a map; a list may
    // mix them, and a later list may grow the array past steps the map already numbered.
    const step = fc.oneof(
      fc.nat(64),
      fc.nat(2500),
      fc.integer({ min: 2 ** 24 - 2, max: 2 ** 24 + 2 }),
    );
    const lists = fc.array(fc.uniqueArray(step, { maxLength: 200 }), { maxLength: 6 });
    fc.assert(
      fc.property(lists, (ls) => {
        const sorted = ls.map((l) => [...l].sort((a, b) => a - b));
        const view = new TermView({ postings: (t) => sorted[Number(t)]!, entry: () => undefined! });
        const seen = new Map<number, number>();
        sorted.forEach((list, t) => {
          const ords = view.postingsOf(String(t));
          expect(ords.map((o) => view.stepAt(o))).toEqual(list);
          list.forEach((s, i) => {
            if (!seen.has(s)) seen.set(s, ords[i]!);
            expect(ords[i]).toBe(seen.get(s));
          });
        });
        expect(new Set(seen.values()).size).toBe(seen.size);
      }),
      { numRuns: 500 },
    );
  });
});
