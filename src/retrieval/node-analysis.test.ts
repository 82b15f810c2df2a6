import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints } from '../protocol/canonical-json.js';
import { blockSpans } from './block-spans.js';
import {
  ANALYSIS_CHARS,
  analysisKey,
  analyzeNode,
  BLOCK_CHARS,
  decodeStoredAnalysis,
  NODE_ANALYSIS_VERSION,
  type NodeAnalysis,
  parseNodeAnalysis,
  payloadLines,
  RANKED_ANALYZER_VERSION,
  shapeMask,
  storedAnalysis,
} from './node-analysis.js';
import { ANSWER_SHAPES, hasErrorSignal } from './ranked-intent.js';
import { proseRatio, rankedTermsUncached } from './ranked-terms.js';

const a = (text: string, summary = '') => analyzeNode({ summary, text, tokens: text.length });
const bit = (name: string) => 1 << ANSWER_SHAPES.findIndex((s) => s.name === name);

describe('analyzeNode', () => {
  it('keys of summary and payload, sorted, with term frequencies', () => {
    const x = a('port 5433\nport 5434\n', 'tool: psql');
    expect(x.version).toBe(NODE_ANALYSIS_VERSION);
    expect(x.keys).toEqual(['5433', '5434', 'port', 'psql', 'tool']);
    expect(x.counts).toEqual([1, 1, 2, 1, 1]);
    expect(x.length).toBe(6);
    // Header: the summary and the first payload line.
    expect(x.head.map((i) => x.keys[i])).toEqual(['5433', 'port', 'psql', 'tool']);
  });

  it('cuts the payload into blocks of whole lines, each with its own keys and signals', () => {
    const filler = `${'lorem ipsum dolor sit amet '.repeat(10)}\n`;
    const text = `${filler.repeat(4)}Error: x-api-key header is required\n${filler.repeat(4)}[main 0925f8d] done\n`;
    const x = a(text);
    expect(x.blocks.length).toBeGreaterThan(2);
    const lines = payloadLines(text);
    let next = 0;
    for (const b of x.blocks) {
      expect(b.start).toBe(next); // contiguous, in order, whole lines
      next = b.end;
      const chars = lines.slice(b.start, b.end).join('').length;
      expect(chars <= BLOCK_CHARS || b.end - b.start === 1).toBe(true);
      expect(b.counts.reduce((s, n) => s + n, 0)).toBe(b.length);
    }
    expect(next).toBe(lines.length);
    const errorBlock = x.blocks.find((b) => b.error)!;
    expect(errorBlock.keys.map((i) => x.keys[i])).toContain('header');
    expect(x.blocks.at(-1)!.shapes & bit('hash')).not.toBe(0);
    expect(x.error).toBe(true);
  });

  it('an empty payload is one empty block', () => {
    expect(a('').blocks).toEqual([
      { start: 0, end: 1, keys: [], counts: [], length: 0, shapes: 0, error: false, prose: 0 },
    ]);
  });
});

describe('analyzeNode: whole-payload flags from the blocks', () => {
  it('the failure flag and prose share are those of the whole text (property)', () => {
    const word = fc.constantFrom(
      'the',
      'we',
      'error',
      'Error:',
      'not',
      'found',
      'exit',
      'code',
      '1',
      '2 failures',
      'ok',
      'ERR!',
      'x'.repeat(400),
      'the '.repeat(150),
      '\r',
    );
    const line = fc
      .array(fc.oneof(word, fc.string({ maxLength: 8 })), { maxLength: 40 })
      .map((w) => w.join(' '));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), fc.boolean(), (lines, lastNewline) => {
        const text = lines.join('\n') + (lastNewline ? '\n' : '');
        const x = a(text);
        if (text.length > 3 * BLOCK_CHARS) expect(x.blocks.length).toBeGreaterThan(1);
        expect(x.error).toBe(hasErrorSignal(text));
        expect(x.prose).toBe(Math.round(proseRatio(text) * 1000) / 1000);
      }),
      { numRuns: 200 },
    );
  });
});

describe('analyzeNode: whole-payload shapes from the blocks', () => {
  it('are those of the whole text, shapes that straddle a block boundary included (property)', () => {
    const piece = fc.constantFrom(
      '5',
      'ms',
      '12 tests',
      '"command"',
      ':',
      'port',
      '5432',
      ':8080',
      '$ ls',
      '  > x',
      'a.ts:12',
      '0925f8d',
      'v1.2.3',
      '```bash',
      ' ',
      '\r',
      'x'.repeat(990),
    );
    // A line starts and ends with pieces, padded so that blocks break between lines: a match
    // such as `5\nms` or `port\n5432` then falls across two blocks.
    const pad = fc.constantFrom('', 'x '.repeat(250), 'x'.repeat(995));
    const line = fc
      .tuple(fc.oneof(piece, fc.string({ maxLength: 4 })), pad, piece)
      .map(([head, p, tail]) => `${head} ${p} ${tail}`);
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.boolean(), (lines, lastNewline) => {
        const text = lines.join('\n') + (lastNewline ? '\n' : '');
        expect(a(text).shapes).toBe(shapeMask(text));
      }),
      { numRuns: 300 },
    );
  });
});

/** Keys of a text by definition: the uncached keys, with their frequencies. */
function tf(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of rankedTermsUncached(text)) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

/** Blocks by definition: whole lines, packed greedily up to `BLOCK_CHARS`. */
function blockTexts(text: string): { start: number; end: number; text: string }[] {
  const out: { start: number; end: number; text: string }[] = [];
  payloadLines(text).forEach((line, i) => {
    const cur = out.at(-1);
    if (!cur || (cur.text.length > 0 && cur.text.length + line.length > BLOCK_CHARS)) {
      out.push({ start: i, end: i + 1, text: line });
    } else {
      cur.text += line;
      cur.end = i + 1;
    }
  });
  return out;
}

/** Checks an analysis against the definitions of its parts (keys, blocks, shapes, prose). */
function expectDefinition(x: NodeAnalysis, summary: string, text: string): void {
  const all = tf(summary);
  for (const [k, n] of tf(text)) all.set(k, (all.get(k) ?? 0) + n);
  const keys = [...all.keys()].sort(compareCodePoints);
  // As JSON: a deep comparison of 100,000 keys takes seconds.
  expect(JSON.stringify(x.keys)).toBe(JSON.stringify(keys));
  expect(JSON.stringify(x.counts)).toBe(JSON.stringify(keys.map((k) => all.get(k))));
  const at = new Map(keys.map((k, i) => [k, i]));
  const index = (m: Map<string, number>) =>
    [...m.keys()].map((k) => at.get(k)!).sort((p, q) => p - q);
  expect(x.head).toEqual(index(tf(`${summary}\n${payloadLines(text)[0]}`)));
  const blocks = blockTexts(text);
  expect(x.blocks.length).toBe(blocks.length);
  x.blocks.forEach((b, i) => {
    const want = blocks[i]!;
    const m = tf(want.text);
    expect([b.start, b.end]).toEqual([want.start, want.end]);
    expect(JSON.stringify(b.keys)).toBe(JSON.stringify(index(m)));
    expect(JSON.stringify(b.counts)).toBe(JSON.stringify(b.keys.map((j) => m.get(keys[j]!))));
    expect(b.shapes).toBe(shapeMask(want.text));
    expect(b.error).toBe(hasErrorSignal(want.text));
    expect(b.prose).toBe(Math.round(proseRatio(want.text) * 1000) / 1000);
  });
  expect(x.shapes).toBe(shapeMask(text));
}

describe('analyzeNode: the definition on any text', () => {
  // Line breaks of every kind, NUL, escapes, astral, combining and case-changing characters,
  // lone surrogates, separators, long compounds and lines.
  const piece = fc.constantFrom(
    '\r\n',
    '\r',
    '\n',
    '\0',
    '\\n',
    '\\\\t',
    'a\\b',
    '😀',
    '👍🏽',
    'e\u0301',
    'İNCİ',
    'ı',
    '\u212a',
    'ſ',
    'ΟΔΟΣ',
    '\ud800',
    '\udc00',
    '\uff01',
    '\u{1f600}x',
    '\u2014',
    '2026-03-01T00:44:07Z',
    'priv/static/app.js',
    'HTTPServer2Go',
    'phoenix_live_view',
    'a.b-c:d@e',
    '806.5KB',
    '0925f8d',
    'port 5432',
    'The',
    'because',
    '12 tests',
    'Error:',
    'x'.repeat(140),
    'ab/'.repeat(50),
    'z'.repeat(1200),
  );
  const parts = fc.array(
    fc.oneof(piece, fc.string({ maxLength: 10 }), fc.string({ unit: 'binary', maxLength: 6 })),
    { maxLength: 120 },
  );
  const text = fc
    .tuple(parts, fc.constantFrom(' ', '', '\n'))
    .map(([p, separator]) => p.join(separator));

  it('keys, counts, head and blocks are those of the text and summary (property)', () => {
    fc.assert(
      fc.property(text, fc.oneof(fc.string(), piece), (t, summary) => {
        expectDefinition(analyzeNode({ summary, text: t, tokens: 0 }), summary, t);
      }),
      { numRuns: 400 },
    );
  });

  it('the empty text and a text of line breaks only', () => {
    for (const t of ['', '\n', '\n\n\n', '\r\n\r\n', '\r']) {
      expectDefinition(analyzeNode({ summary: 'x y', text: t, tokens: 0 }), 'x y', t);
    }
  });

  it('an analysis with more keys than the key ids hold, and the analyses after it', () => {
    // Over 65,536 distinct keys (three per item): the id table grows within the analysis and is emptied before
    // the next one, with the compound and part caches (which hold ids).
    const huge = Array.from({ length: 23_000 }, (_, i) => `k${i.toString(36)}z a/${i}`).join(' ');
    const small = 'port 5432 priv/static/app.js 2026-03-01T00:44:07Z\n';
    const before = analyzeNode({ summary: 's', text: small, tokens: 0 });
    expectDefinition(
      analyzeNode({ summary: 's', text: `${huge}\n${small}`, tokens: 0 }),
      's',
      `${huge}\n${small}`,
    );
    const after = analyzeNode({ summary: 's', text: small, tokens: 0 });
    expect(after).toEqual(before);
    expectDefinition(after, 's', small);
  });

  it("a log of many blocks, each holding few of the turn's many distinct keys", () => {
    // Blocks whose keys are a small share of the turn's are put in order by a sort, not by a
    // pass over all the turn's keys; both ways must give the definition's blocks.
    const log = Array.from({ length: 4_000 }, (_, i) => `w${i.toString(36)}q x${i % 7}`)
      .map((line, i) => (i % 10 === 9 ? `${line}\n` : `${line} `))
      .join('');
    expectDefinition(analyzeNode({ summary: 's', text: log, tokens: 0 }), 's', log);
  });
});

describe('analyzeNode: a payload over ANALYSIS_CHARS', () => {
  // Lines of 64 characters, each with a key of its own (`k<line>z`) and a shared word.
  const line = (i: number) => `${`step k${i.toString(36)}z built`.padEnd(63, '.')}\n`;
  const log = (chars: number) => {
    const n = Math.ceil(chars / 64);
    return Array.from({ length: n }, (_, i) => line(i))
      .join('')
      .slice(0, chars);
  };
  const key = (i: number) => `k${i.toString(36)}z`;
  const over = log(3 * ANALYSIS_CHARS);
  const lines = Math.ceil(over.length / 64);
  const x = analyzeNode({ summary: 'tool: build', text: over, tokens: 0 });

  it('reads at most ANALYSIS_CHARS of it, and says so', () => {
    expect(x.partial).toEqual({ chars: over.length, analysed: expect.any(Number) });
    expect(x.partial!.analysed).toBeLessThanOrEqual(ANALYSIS_CHARS);
    expect(x.partial!.analysed).toBeGreaterThan(ANALYSIS_CHARS - 2 * BLOCK_CHARS);
    // A line's key and its parts (fewer than two a line), where the whole payload has
    // three times as many lines.
    expect(x.keys.length).toBeLessThanOrEqual((2 * ANALYSIS_CHARS) / 64);
    expect(x.blocks.length).toBeLessThanOrEqual(ANALYSIS_CHARS / 960 + 2);
    expect(parseNodeAnalysis(JSON.parse(JSON.stringify(x)))).toEqual(x);
  });

  it('reads its head and its tail, as blocks of the whole payload', () => {
    const whole = blockSpans(over).spans.map((b) => `${b.start}-${b.end}`);
    for (const b of x.blocks) expect(whole).toContain(`${b.start}-${b.end}`);
    expect(x.blocks[0]!.start).toBe(0);
    expect(x.blocks.at(-1)!.end).toBe(lines);
    for (const i of [0, 100, lines - 100, lines - 1]) expect(x.keys).toContain(key(i));
    expect(x.keys).not.toContain(key(Math.floor(lines / 2)));
    expect(x.head.map((i) => x.keys[i])).toContain(key(0));
  });

  it('reads a payload of one huge line up to the budget', () => {
    const one = 'word '.repeat(ANALYSIS_CHARS);
    const y = analyzeNode({ summary: '', text: one, tokens: 0 });
    expect(y.blocks).toHaveLength(1);
    expect(y.blocks[0]!.length).toBeLessThanOrEqual(ANALYSIS_CHARS / 5);
    expect(y.partial!.analysed).toBeLessThanOrEqual(ANALYSIS_CHARS);
  });

  it('reads a payload of ANALYSIS_CHARS whole, as the definition does: no partial', () => {
    const at = log(ANALYSIS_CHARS);
    const y = analyzeNode({ summary: 'tool: build', text: at, tokens: 0 });
    expect('partial' in y).toBe(false);
    expectDefinition(y, 'tool: build', at);
    expect('partial' in analyzeNode({ summary: '', text: `${at}x`, tokens: 0 })).toBe(true);
  });
});

describe('analyzeNode: keys that share their first characters', () => {
  it('a log of thousands of timestamps (one run of equal prefixes) in code-point order', () => {
    const log = Array.from(
      { length: 3_000 },
      (_, i) => `2026-01-04T10:${String(i % 60).padStart(2, '0')}:${i}Z v2026-${i} ok\n`,
    ).join('');
    expectDefinition(analyzeNode({ summary: 's', text: log, tokens: 0 }), 's', log);
  });
});

describe('parseNodeAnalysis', () => {
  it('round-trips any analysis through JSON (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 2500 }),
        fc.string(),
        (text, summary) => {
          const x = analyzeNode({ summary, text, tokens: 7 });
          const back = parseNodeAnalysis(JSON.parse(JSON.stringify(x)));
          expect(back).toEqual(x);
          expect(JSON.stringify(back)).toBe(JSON.stringify(x)); // same bytes: field order too
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses anything a fresh analysis could not be', () => {
    const ok = a('alpha beta\ngamma beta\n', 'tool: x');
    const block = ok.blocks[0]!;
    const bad: unknown[] = [
      null,
      [],
      { ...ok, version: 1 },
      { ...ok, keys: [...ok.keys].reverse() }, // unsorted
      { ...ok, keys: [ok.keys[0], ...ok.keys.slice(0, -1)] }, // repeated
      { ...ok, keys: ['', ...ok.keys.slice(1)] }, // empty key
      { ...ok, counts: ok.counts.slice(1) }, // fewer counts than keys
      { ...ok, counts: ok.counts.map(() => 0) }, // a zero count
      { ...ok, counts: ok.counts.map((n) => n + 0.5) }, // not a count
      { ...ok, length: ok.length + 1 }, // counts do not sum to the length
      { ...ok, tokens: -1 },
      { ...ok, head: [ok.keys.length] }, // out of range
      { ...ok, head: [1, 0] }, // not increasing
      { ...ok, blocks: [] },
      { ...ok, blocks: [{ ...block, keys: [99] }] },
      { ...ok, blocks: [{ ...block, length: block.length + 1 }] },
      { ...ok, blocks: [{ ...block, start: 2, end: 1 }] },
      { ...ok, blocks: [block, block] }, // overlapping lines
      { ...ok, blocks: [{ ...block, prose: 2 }] },
      { ...ok, prose: 'x' },
      { ...ok, shapes: -1 },
      { ...ok, error: 'no' },
      { ...ok, partial: { chars: 10, analysed: 10 } }, // not partial
      { ...ok, partial: { chars: 10 } },
      { ...ok, partial: 3 },
    ];
    for (const v of bad) expect(parseNodeAnalysis(v)).toBeUndefined();
    // Code-point order, not UTF-16 order: U+FF01 sorts before an astral character.
    const astral: NodeAnalysis = { ...ok, keys: ['\uFF01', '\u{1F600}', ...ok.keys.slice(2)] };
    expect(
      parseNodeAnalysis({ ...astral, keys: ['\u{1F600}', '\uFF01', ...ok.keys.slice(2)] }),
    ).toBeUndefined();
  });
});

describe('stored analyses', () => {
  const a = analyzeNode({
    summary: 'tool: psql',
    text: `port 5433\n${'progress line\n'.repeat(120)}error: connection refused\n`,
    tokens: 0,
  });

  it('round-trip through the stored form, with the token count of the reader', () => {
    const s = storedAnalysis(a);
    expect(s.terms).toEqual(a.keys);
    expect(s.tfs).toEqual(a.counts);
    expect(s.parts).toBe(a.blocks.length);
    expect(s.parts).toBeGreaterThan(1);
    expect(s.partLength).toBe(a.blocks.reduce((n, b) => n + b.length, 0));
    expect(decodeStoredAnalysis(s.features, 77)).toEqual({ ...a, tokens: 77 });
  });

  it('a damaged or foreign stored analysis decodes to nothing', () => {
    const f = JSON.parse(storedAnalysis(a).features) as Record<string, unknown>;
    for (const bad of [
      '',
      '{',
      JSON.stringify({ ...f, version: 1 }),
      JSON.stringify({ ...f, blocks: [] }),
      JSON.stringify({ ...f, length: (f.length as number) + 1 }),
      // The single-document form of analyzer r1 (features were `error|prose|shapes`).
      '0|0.1|',
    ]) {
      expect(decodeStoredAnalysis(bad, 1)).toBeUndefined();
    }
  });

  it('keys name the analyzer version, the payload and the summary', () => {
    expect(RANKED_ANALYZER_VERSION).toBe(`ranked-analysis-r${NODE_ANALYSIS_VERSION}`);
    const k = analysisKey({ payload_sha256: 'ab', summary: 's' });
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    expect(analysisKey({ payload_sha256: 'ab', summary: 't' })).not.toBe(k);
    expect(analysisKey({ payload_sha256: 'ac', summary: 's' })).not.toBe(k);
  });
});
