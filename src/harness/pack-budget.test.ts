import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { o200kTokenizer } from '../extract/tokenizer.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import type { HistoryMessage } from './messages.js';
import {
  type AssembleInput,
  assemblePack,
  type PackPage,
  pageTokens,
  pinnedTokens,
  renderPackText,
  turnTokens,
} from './pack.js';
import {
  foldedRecord,
  historyTurns,
  pageOf,
  shapeMessages,
  T,
  turnShapes,
} from './test-utils/pack-fixtures.js';
import { TokenMeter } from './token-meter.js';
import { groupTurns } from './turns.js';

const tok = o200kTokenizer();
const meter = new TokenMeter(tok);

const word = fc.constantFrom('alpha', 'beta', 'npm test', 'failed', '\n', 'é', '🙂', 'x.');
const short = fc.array(word, { maxLength: 12 }).map((w) => w.join(' '));
/** Short texts (smaller than an excerpt's marker line: never cut) and long ones (cut). */
const text = fc.oneof(
  short,
  fc.tuple(word, fc.integer({ min: 20, max: 400 })).map(([w, n]) => `${w} `.repeat(n)),
);

const turnShape = turnShapes(text);

/**
 * Random turns, pinned notes, records, a live part (the last turn, with up to two earlier
 * turns of its exchange), an optional page admitted as the session admits it (its block fits
 * beside L3, the live turn and the live exchange's turns, all whole), and a budget.
 */
const caseArb = fc
  .record({
    records: fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 8 }),
    turns: fc.array(turnShape, { minLength: 1, maxLength: 7 }),
    task: fc.integer({ min: 0, max: 2 }),
    pinned: fc.array(short, { maxLength: 2 }),
    page: fc.option(text, { nil: null }),
    budget: fc.integer({ min: 1, max: 1500 }),
    overflow: fc.constantFrom('excerpt' as const, 'send-whole' as const),
  })
  .map(({ records, turns: shapes, task, pinned, page, budget, overflow }): AssembleInput => {
    const msgs = shapeMessages(shapes, 'checking');
    const base = records.length;
    const turns = historyTurns(msgs, base);
    const current = turns[turns.length - 1]!;
    const recent = turns.slice(0, -1);
    const taskTurns = recent.slice(recent.length - Math.min(task, recent.length));
    const notes = pinned.map((p, i) => ({
      kind: 'note' as const,
      id: i,
      message: { role: 'system' as const, content: p },
    }));
    const pages: PackPage[] = [];
    if (page !== null) {
      const p = pageOf(page);
      let fixed = pinnedTokens(meter, notes) + turnTokens(current, meter);
      for (const t of taskTurns) fixed += turnTokens(t, meter);
      if (pageTokens(meter, p) <= budget - fixed) pages.push(p);
    }
    return {
      turn: 0,
      stepId: current.stepId,
      budget,
      meter,
      pinned: notes,
      records: records.map((w, i) => foldedRecord(i, w)),
      recent,
      current,
      currentIsPrompt: current.kind === 'user',
      pages,
      pageFailures: [],
      folded: [],
      liveOverflow: overflow,
      live: { task: taskTurns },
      strictBudget: true,
    };
  });

describe('assemblePack under the strict budget rule (property)', () => {
  it('is never over its budget unless what it cannot leave out or cut is, and then says so', () => {
    fc.assert(
      fc.property(caseArb, (input) => {
        const pack = assemblePack(input);
        // The count is of the exact assembled bytes.
        expect(pack.tokens).toBe(tok.count(renderPackText(pack)));
        expect(pack.metadata.over_budget).toBe(pack.tokens > input.budget);
        // Pages are admitted beside everything that is never dropped: they never put it over.
        if (pack.metadata.paged_in.length > 0) expect(pack.metadata.over_budget).toBe(false);
        if (!pack.metadata.over_budget) return;
        // Over budget: nothing that could leave is left in, and the warning names what is.
        const task = new Set(input.live!.task.map((t) => t.stepId));
        expect(pack.metadata.l2_steps).toEqual([]);
        expect(pack.metadata.l1_steps.filter((s) => !task.has(s))).toEqual([]);
        const warning = pack.metadata.warnings.at(-1)!;
        expect(warning).toContain(`pack is ${pack.tokens} tokens, over the ${input.budget}-token`);
        const live = pack.entries
          .filter((e) => e.layer === 'L0' && e.kind !== 'page')
          .reduce((n, e) => n + e.tokens, 0);
        expect(warning).toContain(`the live turn`);
        expect(warning).toMatch(new RegExp(`live turn[^:;]*: ${live}[;)]`));
        expect(warning).not.toContain('L0 and L3 alone');
      }),
      { numRuns: 300, seed: 20261205 },
    );
  });

  it('a prompt too small to cut no longer keeps a recent turn over the budget (671 in 667 seen)', () => {
    const msgs = groupTurns(
      [
        { role: 'user', content: 'look at the otters' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'What did otterfinch report? please please' },
      ].map((m, i) => ({ ...m, stepId: i, timestamp: T }) as HistoryMessage),
    );
    const current = msgs[2]!;
    const page: PackPage = {
      step_id: 0,
      payload_sha256: sha256Hex('p'),
      chunk: 0,
      chunks: 1,
      truncated: false,
      content: 'otterfinch detail line with value 12345\n'.repeat(20),
      matched_terms: ['otterfinch'],
    };
    const budget = turnTokens(current, meter) + pageTokens(meter, page) + 1;
    const input: AssembleInput = {
      turn: 0,
      stepId: 2,
      budget,
      meter,
      pinned: [],
      records: [],
      recent: msgs.slice(0, 2),
      current,
      currentIsPrompt: true,
      pages: [page],
      pageFailures: [],
      folded: [],
      liveOverflow: 'excerpt',
      live: { task: [] },
    };
    // The recorded rule (no `strictBudget`) keeps the recent turns and ends over budget.
    const legacy = assemblePack(input);
    expect(legacy.tokens).toBeGreaterThan(budget);
    expect(legacy.metadata.warnings.at(-1)).toContain('L0 and L3 alone do not fit');
    const strict = assemblePack({ ...input, strictBudget: true });
    expect(strict.tokens).toBeLessThanOrEqual(budget);
    expect(strict.metadata.over_budget).toBe(false);
    expect(strict.metadata.l1_steps).toEqual([]);
    expect(strict.metadata.paged_in.map((p) => p.step_id)).toEqual([0]);
  });
});
