import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IndexEntry } from '../protocol/types.js';
import { tempDir } from '../test-utils/temp-dir.js';
import {
  emptyState,
  FIELD_RANKED,
  FIELD_REFERENCE,
  type FoldRow,
  IndexDb,
  IndexUnusable,
  type StoredAnalysis,
} from './index-db.js';
import { decodePostings, encodePostings, PostingBlockError } from './posting-block.js';

describe('posting blocks', () => {
  it('round-trip distinct steps in any order, sorted, with their frequencies', () => {
    const postings = fc.uniqueArray(fc.tuple(fc.maxSafeNat(), fc.nat({ max: 100_000 })), {
      selector: (p) => p[0],
      minLength: 1,
      maxLength: 60,
    });
    fc.assert(
      fc.property(postings, (ps) => {
        const b = encodePostings(
          ps.map((p) => p[0]),
          ps.map((p) => p[1]),
        );
        const sorted = [...ps].sort((a, c) => a[0] - c[0]);
        expect(decodePostings(b.data, ps.length)).toEqual({
          steps: sorted.map((p) => p[0]),
          tfs: sorted.map((p) => p[1]),
        });
        expect([b.first, b.last]).toEqual([sorted[0]![0], sorted.at(-1)![0]]);
      }),
    );
  });

  it('refuses bytes that are not a block of the announced count', () => {
    const { data } = encodePostings([3, 7, 300], [1, 2, 1]);
    expect(() => decodePostings(data, 2)).toThrow(PostingBlockError);
    expect(() => decodePostings(data, 4)).toThrow(/ends mid-value/);
    expect(() => decodePostings(data.subarray(0, data.length - 2), 3)).toThrow(PostingBlockError);
    // A gap of zero repeats a step.
    expect(() => decodePostings(Buffer.from([5, 1, 0, 1]), 2)).toThrow(/repeats a step/);
  });
});

const TERMS = ['alpha', 'beta', 'gamma', 'delta', 'eps'];

function entry(step: number, terms: readonly string[]): IndexEntry {
  return {
    step_id: step,
    projection_version: 'ipcf-projection-v2',
    summary: `turn ${step}`,
    payload_sha256: String(step).padStart(64, '0'),
    projection_sha256: String(step).padStart(64, '1'),
    artifact_sha256: String(step).padStart(64, '2'),
    file_path: `cold/step_${step}.json`,
    token_estimate: 1,
    folded_at: '2026-01-01T00:00:00Z',
    identifiers: [...terms],
    files: [],
    commands: [],
    errors: [],
    evicted: false,
  };
}

function analysis(step: number, terms: readonly string[], tfs: readonly number[]): StoredAnalysis {
  return {
    akey: `a${step}`,
    terms: [...terms],
    tfs: [...tfs],
    length: tfs.reduce((s, n) => s + n, 0),
    parts: 1,
    partLength: 1,
    features: '{}',
  };
}

type Op =
  | { kind: 'fold'; turns: { step: number; terms: number[]; tfs: number[] }[] }
  | { kind: 'drop'; pick: number; slow: boolean };

const turnArb = fc.record({
  step: fc.nat({ max: 400 }),
  terms: fc.uniqueArray(fc.nat({ max: TERMS.length - 1 }), { minLength: 1, maxLength: 4 }),
  tfs: fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 4, maxLength: 4 }),
});
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('fold' as const), turns: fc.array(turnArb, { maxLength: 40 }) }),
  fc.record({ kind: fc.constant('drop' as const), pick: fc.nat(), slow: fc.boolean() }),
);

describe('IndexDb postings in blocks', () => {
  it('answer as a row per (term, step) would, after batches in any step order and drops', () => {
    const { dir } = tempDir();
    let run = 0;
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 12 }), (ops) => {
        const db = new IndexDb(join(dir, `p${run++}.sqlite`), { create: true });
        const state = emptyState(null);
        // The model: term → step → tf (ranked), term → steps (reference).
        const ranked = new Map<string, Map<number, number>>(TERMS.map((t) => [t, new Map()]));
        const reference = new Map<string, Set<number>>(TERMS.map((t) => [t, new Set()]));
        const held = new Map<number, string[]>();
        try {
          for (const op of ops) {
            if (op.kind === 'fold') {
              const rows: FoldRow[] = [];
              for (const t of op.turns) {
                if (held.has(t.step)) continue;
                const terms = t.terms.map((i) => TERMS[i]!).sort();
                const tfs = terms.map((_, i) => t.tfs[i]!);
                held.set(t.step, terms);
                terms.forEach((term, i) => {
                  ranked.get(term)!.set(t.step, tfs[i]!);
                  reference.get(term)!.add(t.step);
                });
                const e = entry(t.step, terms);
                rows.push({
                  entry: e,
                  json: JSON.stringify(e),
                  analysis: analysis(t.step, terms, tfs),
                });
              }
              db.transaction(() => db.insertFolds(rows, state));
            } else if (held.size > 0) {
              const steps = [...held.keys()].sort((a, b) => a - b);
              const step = steps[op.pick % steps.length]!;
              const terms = held.get(step)!;
              db.transaction(() => db.drop(step, op.slow ? undefined : terms, state));
              held.delete(step);
              for (const term of terms) {
                ranked.get(term)!.delete(step);
                reference.get(term)!.delete(step);
              }
            }
          }
          for (const term of TERMS) {
            const want = [...ranked.get(term)!].sort((a, b) => a[0] - b[0]);
            for (const limit of [1, 2, 7, 30, 1000]) {
              const kept = want.slice(Math.max(0, want.length - limit));
              expect(db.recentPostings(FIELD_RANKED, term, limit)).toEqual({
                steps: kept.map((p) => p[0]),
                tfs: kept.map((p) => p[1]),
              });
            }
            const refs = [...reference.get(term)!].sort((a, b) => a - b);
            expect(db.allPostings(FIELD_REFERENCE, term)).toEqual(refs);
            expect(db.df(FIELD_RANKED, term)).toBe(want.length);
          }
        } finally {
          db.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('a damaged block makes the index unusable (rebuilt), never a wrong answer', () => {
    const { dir } = tempDir();
    const db = new IndexDb(join(dir, 'd.sqlite'), { create: true });
    const state = emptyState(null);
    const rows = [1, 2, 3].map((s) => {
      const e = entry(s, ['alpha']);
      return { entry: e, json: JSON.stringify(e), analysis: analysis(s, ['alpha'], [1]) };
    });
    db.transaction(() => db.insertFolds(rows, state));
    db.db.prepare('UPDATE postings SET n = n + 1').run();
    expect(() => db.recentPostings(FIELD_RANKED, 'alpha', 2)).toThrow(IndexUnusable);
    expect(() => db.allPostings(FIELD_REFERENCE, 'alpha')).toThrow(IndexUnusable);
    db.close();
  });
});
