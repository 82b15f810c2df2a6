import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints } from '../protocol/canonical-json.js';
import { analyzeNode } from './node-analysis.js';
import {
  blockCount,
  DocLayout,
  docLayout,
  hasId,
  KeyNumbers,
  keyHash,
  keyNumbers,
  localKey,
  RankedIndex,
  rankedDoc,
} from './ranked-index.js';
import { ANSWER_SHAPES } from './ranked-intent.js';
import { rankedScan } from './ranked-scan.js';

const doc = (stepId: number, content: string, summary = '') => ({
  stepId,
  summary,
  content,
  tokens: content.length,
});

describe('RankedIndex', () => {
  it('keeps postings with term frequencies and document frequencies', () => {
    const ix = new RankedIndex();
    ix.add(doc(3, 'port 5433 port'));
    ix.add(doc(9, 'port 5434'));
    expect(ix.size).toBe(2);
    expect(ix.docFrequency('port')).toBe(2);
    expect(ix.docFrequency('5433')).toBe(1);
    expect(ix.postings('port')).toMatchObject({ docs: [0, 1], tfs: [2, 1] });
    expect(ix.doc(ix.docOf(9)!)).toMatchObject({ stepId: 9, length: 2, tokens: 9 });
    expect(ix.docOf(4)).toBeUndefined();
  });

  it('indexes the summary with the content', () => {
    const ix = new RankedIndex();
    ix.add(doc(1, 'ok', 'tool: psql migrations'));
    expect(ix.docFrequency('migration')).toBe(1);
  });

  it('adding a step twice is a no-op (folds are immutable)', () => {
    const ix = new RankedIndex();
    ix.add(doc(1, 'alpha'));
    ix.add(doc(1, 'beta'));
    expect(ix.size).toBe(1);
    expect(ix.docFrequency('beta')).toBe(0);
  });

  it('prefix extensions come from the bucket, not a vocabulary scan', () => {
    const ix = new RankedIndex();
    ix.add(doc(1, 'postgresql postgres_db posture'));
    expect(ix.extensions('postgres').sort()).toEqual(['postgres_db', 'postgresdb', 'postgresql']);
    expect(ix.extensions('pos')).toEqual([]); // shorter than the bucket: no expansion
  });

  it('records failure signals, prose ratio and answer shapes per turn', () => {
    const ix = new RankedIndex();
    ix.add(doc(1, 'zsh: command not found: tree'));
    ix.add(doc(2, '[main 0925f8d] feat: x'));
    expect(ix.doc(0).error).toBe(true);
    expect(ix.doc(1).error).toBe(false);
    const hash = 1 << ANSWER_SHAPES.findIndex((s) => s.name === 'hash');
    expect(ix.doc(1).shapes & hash).toBe(hash);
  });

  it('keeps each turn’s analysis: blocks and header over its sorted keys', () => {
    const ix = new RankedIndex();
    ix.add(doc(1, 'alpha beta'));
    ix.add(doc(2, 'beta gamma gamma', 'tool: run'));
    const d = ix.doc(ix.docOf(2)!);
    expect(d.keys).toEqual(['beta', 'gamma', 'run', 'tool']);
    expect(d.blocks).toHaveLength(1);
    expect(blockCount(d.blocks[0]!, localKey(d.keys, 'gamma'))).toBe(2);
    expect(localKey(d.keys, 'alpha')).toBe(-1);
    expect(d.head.map((i) => d.keys[i])).toEqual(['beta', 'gamma', 'run', 'tool']);
    expect(ix.lastStep).toBe(2);
    expect(ix.averageBlockLength).toBeCloseTo((2 + 3) / 2);
  });

  it('finds a key in a code-point-sorted list whatever its units (astral, U+E000–U+FFFF, ASCII)', () => {
    // Native order and code-point order differ exactly between surrogates and U+E000–U+FFFF.
    const unit = fc.constantFrom(
      'a',
      'b',
      'z',
      '0',
      '\u00e9',
      '\ud7ff',
      '\ue000',
      '\uff01',
      '\u{1F600}',
      '\u{10FFFF}',
    );
    const word = fc.array(unit, { minLength: 1, maxLength: 4 }).map((u) => u.join(''));
    fc.assert(
      fc.property(fc.uniqueArray(word, { maxLength: 30 }), word, (words, probe) => {
        const keys = [...words].sort(compareCodePoints);
        for (const k of [...keys, probe]) expect(localKey(keys, k)).toBe(keys.indexOf(k));
      }),
      { numRuns: 500 },
    );
  });

  it('a document layout answers what the analysis answers: key ids, blocks, header', () => {
    const word = fc.constantFrom('port', 'p0rt', '5433', 'db', 'Error', 'caf\u00e9', '\u{1F600}x');
    const line = fc.array(word, { minLength: 0, maxLength: 6 }).map((w) => w.join(' '));
    const text = fc.array(line, { minLength: 1, maxLength: 40 }).map((l) => l.join('\n'));
    const extra = fc.array(fc.string({ minLength: 1, maxLength: 6 }), { maxLength: 40 });
    fc.assert(
      fc.property(text, extra, fc.string({ maxLength: 20 }), (t, more, summary) => {
        // Many keys (a large table, colliding hashes) next to a few repeated words.
        const content = `${t}\n${more.join(' ')}`;
        const d = rankedDoc(1, analyzeNode({ summary, text: content, tokens: 1 }));
        const layout = new DocLayout(d);
        const entry = (k: string) => layout.find(keyNumbers.of(k), keyHash(k));
        for (const k of [...more, 'absent-key']) {
          if (localKey(d.keys, k) < 0) expect(entry(k)).toBe(-1);
        }
        expect(layout.blocks).toBe(d.blocks.length);
        d.blocks.forEach((b, bi) => {
          expect(layout.blockLength(bi)).toBe(b.length);
          expect(layout.blockShapes(bi)).toBe(b.shapes);
          expect(layout.blockError(bi)).toBe(b.error);
          expect(Object.is(layout.blockProse(bi), b.prose)).toBe(true);
        });
        const entries = new Set<number>();
        d.keys.forEach((k, id) => {
          const at = entry(k);
          expect(at).toBeGreaterThanOrEqual(0);
          entries.add(at);
          expect(layout.inHead(at)).toBe(hasId(d.head, id));
          const pairs: [number, number][] = [];
          const run = layout.runOf(at);
          let last = run < 0;
          for (let p = run; !last; p += 2) {
            const bi = layout.ints[p]!;
            last = bi < 0;
            pairs.push([last ? ~bi : bi, layout.ints[p + 1]!]);
          }
          const want = d.blocks
            .map((b, bi): [number, number] => [bi, blockCount(b, id)])
            .filter(([, tf]) => tf > 0);
          expect(pairs).toEqual(want);
        });
        expect(entries.size).toBe(d.keys.length);
      }),
      { numRuns: 200 },
    );
  });

  it("a prompt key's remembered number is the numbering's, also after it starts over", () => {
    const numbers = new KeyNumbers();
    expect(numbers.ofPromptKey('port')).toBe(numbers.of('port'));
    numbers.of('5433');
    expect(numbers.ofPromptKey('5433')).toBe(numbers.of('5433'));
    for (let i = 0; numbers.epoch === 0; i++) {
      numbers.of(`filler-${i}`);
      if (i % 4096 === 0) numbers.trim();
    }
    // The new epoch numbers 'redis' first: a number remembered from the old epoch would be its.
    numbers.of('redis');
    expect(numbers.ofPromptKey('port')).toBe(numbers.of('port'));
    expect(numbers.ofPromptKey('port')).not.toBe(numbers.of('redis'));
  });

  it('when the key numbering starts over, layouts are rebuilt and scans answer the same', () => {
    const index = new RankedIndex();
    index.add(doc(1, 'docker compose up -d postgres'));
    index.add(doc(2, 'postgresql listening on port 5433'));
    index.add(doc(3, 'redis listening on port 6380'));
    const prompt = 'Which port is postgresql listening on?';
    const caps = { perTurnCap: 3500, perCallCap: 3000 };
    const before = rankedScan(index, prompt, caps);
    const layout = docLayout(index.doc(1));
    const epoch = keyNumbers.epoch;
    // Fill the numbering until a scan starts it over (keys no layout holds).
    for (let i = 0; keyNumbers.epoch === epoch; i++) {
      keyNumbers.of(`filler-${i}`);
      if (i % 4096 === 0) keyNumbers.trim();
    }
    expect(docLayout(index.doc(1))).not.toBe(layout);
    // The numbers of the keys differ in the new epoch: stale tables would find nothing.
    expect(rankedScan(index, prompt, caps)).toEqual(before);
    expect(before.selected[0]?.step_id).toBe(2);
  });
});
