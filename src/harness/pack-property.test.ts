import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { o200kTokenizer } from '../extract/tokenizer.js';
import type { FoldedStep } from '../protocol/types.js';
import {
  type AssembleInput,
  assemblePack,
  frameTokens,
  type PackPage,
  pageTokens,
  pinnedTokens,
  recordTokens,
  renderPackText,
  turnTokens,
} from './pack.js';
import { dropOldest } from './pack-trim.js';
import {
  foldedRecord,
  historyTurns,
  pageOf,
  shapeMessages,
  T,
  turnShapes,
} from './test-utils/pack-fixtures.js';
import { TokenMeter } from './token-meter.js';
import { groupTurns, type Turn } from './turns.js';

const tok = o200kTokenizer();
const meter = new TokenMeter(tok);

const word = fc.constantFrom('alpha', 'beta', 'gamma', 'npm test', 'failed', '\n', 'é', '🙂');
const text = fc.array(word, { minLength: 0, maxLength: 30 }).map((w) => w.join(' '));

/** A recent-turn shape: a user message, or an assistant call and its result. */
const turnShape = turnShapes(text);

interface Case {
  input: AssembleInput;
}

/** Random inputs: history grouped into turns the way a session does it. */
const caseArb = fc
  .record({
    records: fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 12 }),
    recent: fc.array(turnShape, { maxLength: 8 }),
    prompt: text,
    pinned: fc.array(text, { maxLength: 3 }),
    page: fc.option(text, { nil: null }),
    budget: fc.integer({ min: 1, max: 900 }),
  })
  .map(({ records, recent, prompt, pinned, page, budget }): Case => {
    const msgs = shapeMessages(recent, '');
    msgs.push({ role: 'user', content: prompt });
    const base = records.length;
    const turns = historyTurns(msgs, base);
    const pages: PackPage[] = page === null ? [] : [pageOf(page)];
    return {
      input: {
        turn: 0,
        stepId: base + msgs.length - 1,
        budget,
        meter,
        pinned: pinned.map((p, i) => ({
          kind: 'note' as const,
          id: i,
          message: { role: 'system' as const, content: p },
        })),
        records: records.map((w, i) => foldedRecord(i, w)),
        recent: turns.slice(0, -1),
        current: turns[turns.length - 1]!,
        currentIsPrompt: true,
        pages,
        pageFailures: [],
        folded: [],
      },
    };
  });

/**
 * The trimming rule stated declaratively: keep the longest suffix of the records that fits
 * with every recent turn; when not even an empty L2 fits, keep no record and the longest
 * suffix of the recent turns that fits.
 */
function reference(input: AssembleInput): { l2: number[]; l1: number[] } {
  const fixed =
    pinnedTokens(meter, input.pinned) +
    (input.current ? turnTokens(input.current, meter) : 0) +
    input.pages.reduce((n, p) => n + pageTokens(meter, p), 0);
  const l2 = (rs: readonly FoldedStep[]): number =>
    rs.length === 0 ? 0 : frameTokens(meter) + rs.reduce((n, r) => n + recordTokens(meter, r), 0);
  const l1 = (ts: readonly Turn[]): number => ts.reduce((n, t) => n + turnTokens(t, meter), 0);
  const { records, recent, budget } = input;
  for (let k = 0; k < records.length; k++) {
    const kept = records.slice(k);
    if (fixed + l2(kept) + l1(recent) <= budget) {
      return { l2: kept.map((r) => r.step_id), l1: recent.map((t) => t.stepId) };
    }
  }
  for (let k = 0; k < recent.length; k++) {
    const kept = recent.slice(k);
    if (fixed + l1(kept) <= budget) return { l2: [], l1: kept.map((t) => t.stepId) };
  }
  return { l2: [], l1: [] };
}

describe('assemblePack (property)', () => {
  it('keeps exactly what the declarative trimming rule keeps, and counts exactly', () => {
    fc.assert(
      fc.property(caseArb, ({ input }) => {
        const pack = assemblePack(input);
        const want = reference(input);
        expect(pack.metadata.l2_steps).toEqual(want.l2);
        expect(pack.metadata.l1_steps).toEqual(want.l1);
        const dropped = pack.metadata.truncated.flatMap((t) => t.steps);
        const keptSteps = [
          ...want.l2,
          ...input.recent.filter((t) => want.l1.includes(t.stepId)).flatMap((t) => t.steps),
        ];
        const all = [
          ...input.records.map((r) => r.step_id),
          ...input.recent.flatMap((t) => t.steps),
        ];
        expect([...dropped, ...keptSteps].sort((a, b) => a - b)).toEqual(all);
        expect(pack.tokens).toBe(tok.count(renderPackText(pack)));
        expect(pack.metadata.over_budget).toBe(pack.tokens > input.budget);
        if (want.l2.length + want.l1.length > 0)
          expect(pack.tokens).toBeLessThanOrEqual(input.budget);
      }),
      { numRuns: 150, seed: 20250101 },
    );
  });
});

describe('dropOldest', () => {
  it('reads each cost at most once: 5 000 records trimmed in one pass', () => {
    const n = 5000;
    const values = Array.from({ length: n }, (_, i) => 10 + (i % 7));
    let reads = 0;
    const costs = new Proxy(values, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const total = values.reduce((a, b) => a + b, 0) + 40;
    const r = dropOldest({ costs, total, budget: 1000, lastExtra: 40 });
    const kept = values.slice(r.count).reduce((a, b) => a + b, 0);
    expect(kept + 40).toBeLessThanOrEqual(1000);
    expect(kept + 40 + values[r.count - 1]!).toBeGreaterThan(1000);
    expect(r.total).toBe(kept + 40);
    expect(reads).toBe(r.count);
    // Nothing fits: every item leaves, and so does the frame.
    reads = 0;
    expect(dropOldest({ costs, total, budget: 0, lastExtra: 40 })).toEqual({ count: n, total: 0 });
    expect(reads).toBe(n);
  });

  it('a pack over 5 000 records keeps the newest that fit, the rest reported as one note', () => {
    const records = Array.from({ length: 5000 }, (_, i) => foldedRecord(i, i % 5));
    const turns = groupTurns([
      { role: 'user', content: 'Which migration?', stepId: 5000, timestamp: T },
    ]);
    const pack = assemblePack({
      turn: 0,
      stepId: 5000,
      budget: 2000,
      meter,
      pinned: [],
      records,
      recent: [],
      current: turns[0]!,
      currentIsPrompt: true,
      pages: [],
      pageFailures: [],
      folded: [],
    });
    const kept = pack.metadata.l2_steps;
    expect(kept.length).toBeGreaterThan(10);
    expect(kept.at(-1)).toBe(4999);
    expect(pack.metadata.truncated).toHaveLength(1);
    expect(pack.metadata.truncated[0]!.steps).toEqual(
      Array.from({ length: 5000 - kept.length }, (_, i) => i),
    );
    expect(pack.tokens).toBeLessThanOrEqual(2000);
    expect(pack.tokens).toBe(tok.count(renderPackText(pack)));
  });
});
