import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { candidateFeatures } from './ranked-features.js';
import { RankedIndex } from './ranked-index.js';
import { askedShapes, promptIntent } from './ranked-intent.js';
import { parseQuery } from './ranked-query.js';
import { RANKED_DEFAULTS } from './ranked-scan.js';

const WORDS = ['port', '5432', 'postgres', 'redis', 'ttl', 'gateway', 'replicas', 'Error:', 'ok'];

/** Turns of a few lines of the words, some with a summary (header keys) and blank-line blocks. */
const turns = fc.array(
  fc.record({
    lines: fc.array(fc.array(fc.constantFrom(...WORDS, ''), { maxLength: 8 }), {
      minLength: 1,
      maxLength: 12,
    }),
    summary: fc.constantFrom('', 'tool: psql', 'redis-cli config get', 'kubectl get pods'),
  }),
  { minLength: 1, maxLength: 12 },
);

function features(index: RankedIndex, prompt: string) {
  const query = parseQuery(index, prompt, RANKED_DEFAULTS);
  const set = candidateFeatures(
    index,
    query.keys,
    promptIntent(prompt),
    askedShapes(prompt),
    RANKED_DEFAULTS,
  );
  return set.candidates.map((c) => ({ step: c.stepId, block: c.block, f: [...c.features] }));
}

describe('candidateFeatures', () => {
  it('scores a turn the same from its analysis (first scoring) and from its layout (later ones)', () => {
    fc.assert(
      fc.property(turns, fc.subarray(WORDS, { minLength: 1 }), (ts, words) => {
        const index = new RankedIndex();
        ts.forEach((t, i) => {
          const content = t.lines.map((l) => l.join(' ')).join('\n');
          index.add({ stepId: i + 1, summary: t.summary, content, tokens: content.length });
        });
        const prompt = `which ${words.join(' ')} now?`;
        const first = features(index, prompt);
        for (let d = 0; d < index.size; d++) expect(index.doc(d).layout).toBeUndefined();
        const second = features(index, prompt);
        const third = features(index, prompt);
        // Bit for bit: a scan must not rank differently in a fresh process than in a warm one.
        expect(second).toStrictEqual(first);
        expect(third).toStrictEqual(first);
        const scored = new Set(first.map((c) => c.step));
        for (let d = 0; d < index.size; d++) {
          const doc = index.doc(d);
          if (scored.has(doc.stepId)) expect(doc.layout).toBeDefined();
        }
      }),
      { numRuns: 200 },
    );
  });
});
