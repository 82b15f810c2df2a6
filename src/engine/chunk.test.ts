import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  countUpTo,
  o200kTokenizer,
  referenceTokenizer,
  type Tokenizer,
} from '../extract/tokenizer.js';
import { chunkText } from './chunk.js';

/** The chunker as it was before counts were summed (the oracle: its chunks are the contract). */
function oldChunkText(text: string, cap: number, tok: Tokenizer): string[] {
  const splitLines = (t: string): string[] => {
    const out: string[] = [];
    let start = 0;
    for (;;) {
      const nl = t.indexOf('\n', start);
      if (nl === -1) break;
      out.push(t.slice(start, nl + 1));
      start = nl + 1;
    }
    if (start < t.length) out.push(t.slice(start));
    return out;
  };
  const splitLongLine = (line: string): string[] => {
    const cps = Array.from(line);
    const pieces: string[] = [];
    let i = 0;
    while (i < cps.length) {
      let lo = 1;
      let hi = cps.length - i;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (tok.count(cps.slice(i, i + mid).join('')) <= cap) lo = mid;
        else hi = mid - 1;
      }
      pieces.push(cps.slice(i, i + lo).join(''));
      i += lo;
    }
    return pieces;
  };
  if (tok.count(text) <= cap) return [text];
  const units: string[] = [];
  for (const line of splitLines(text)) {
    if (tok.count(line) <= cap) units.push(line);
    else units.push(...splitLongLine(line));
  }
  const counts = units.map((u) => tok.count(u));
  const chunks: string[] = [];
  let i = 0;
  while (i < units.length) {
    let j = i + 1;
    let est = counts[i]!;
    while (j < units.length && est + counts[j]! <= cap) est += counts[j++]!;
    while (j - i > 1 && tok.count(units.slice(i, j).join('')) > cap) j--;
    while (j < units.length && tok.count(units.slice(i, j + 1).join('')) <= cap) j++;
    chunks.push(units.slice(i, j).join(''));
    i = j;
  }
  return chunks;
}

/**
 * Pieces of lines that stress the cuts: blank and white-space-only lines, CRLF, astral
 * characters, lone surrogates, punctuation at line ends and starts, words over a small cap.
 */
const piece = fc.constantFrom(
  '\n',
  '\r\n',
  '\n\n',
  ' ',
  '  ',
  '\t',
  '\u00a0',
  '\u2028',
  ';',
  ';\n/path',
  '/usr/lib',
  '.',
  '.\n//b',
  ' \n',
  '}',
  '{',
  '//',
  "don't",
  'Error',
  'error TS2345',
  'npm',
  '2026-01-04T10:00:00.231Z',
  '12345678',
  'a3f9e0',
  '7d',
  '🙂',
  '𝔘𝔫𝔦',
  '\ud83d',
  'é',
  '<|endoftext|>',
  'at foo (/a/b.ts:1:2)',
  'x'.repeat(60),
);
/** Lines of pieces, most ending in LF, some in CRLF, the last one maybe in neither. */
const line = fc
  .tuple(fc.array(piece, { maxLength: 6 }), fc.constantFrom('\n', '\n', '\n', '\r\n', ''))
  .map(([ps, end]) => ps.join('') + end);
const text = fc.array(line, { maxLength: 40 }).map((ls) => ls.join(''));

/**
 * A deterministic build log of about `kb` KB: timestamps, paths, hashes, indented stack and
 * test lines (with a non-ASCII mark), blank lines, CRLF, lines opening with `/`.
 */
function buildLog(kb: number): string {
  let seed = 7;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return Math.floor((seed / 2 ** 32) * n);
  };
  const hex = (n: number): string =>
    Array.from({ length: n }, () => '0123456789abcdef'[rnd(16)]).join('');
  const shapes = [
    (t: string) =>
      `${t} [INFO] [api] transform src/api/load_${rnd(3000)}.ts (${rnd(200)}.1 kB) in ${rnd(3000)}ms`,
    (t: string) => `${t} cache hit ${hex(40)} -> ${hex(12)}`,
    () => `  \u2713 ui > parse handles case ${rnd(40000)} (${rnd(50)} ms)`,
    () =>
      `    at optimize${rnd(20)} (/home/ci/build/src/store/link_${rnd(3000)}.ts:${rnd(600)}:${rnd(40)})`,
    () => '',
    () => `export const x${rnd(100)} = require('./m${rnd(9)}');`,
    () => `/usr/lib/node_modules/npm/bin/npm-cli.js:${rnd(200)}`,
    () => `${'='.repeat(rnd(3) * 20)}`,
    (t: string) =>
      `${t} [WARN] error TS${2300 + rnd(300)}: Property 'parse${rnd(300)}' does not exist on type 'workerConfig'.`,
  ];
  const lines: string[] = [];
  let size = 0;
  for (let k = 0; size < kb * 1024; k++) {
    const t = `2026-01-04T10:${String(Math.floor(k / 60) % 60).padStart(2, '0')}:${String(k % 60).padStart(2, '0')}.${rnd(1000)}Z`;
    const line = shapes[rnd(shapes.length)]!(t) + (rnd(20) === 0 ? '\r' : '');
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

describe('chunkText', () => {
  for (const tok of [o200kTokenizer(), referenceTokenizer]) {
    it(`cuts exactly the chunks of the per-join algorithm (${tok.name}, small caps)`, () => {
      fc.assert(
        fc.property(text, fc.integer({ min: 1, max: 40 }), (t, cap) => {
          expect(chunkText(t, cap, tok)).toEqual(oldChunkText(t, cap, tok));
        }),
        { numRuns: 500 },
      );
    });
  }

  it('cuts a build log of a few hundred KB exactly as the per-join algorithm', () => {
    const log = buildLog(300);
    const tok = o200kTokenizer();
    for (const cap of [3000, 200]) {
      const chunks = chunkText(log, cap, tok);
      expect(chunks.length).toBeGreaterThan(cap === 3000 ? 20 : 300);
      expect(chunks).toEqual(oldChunkText(log, cap, tok));
    }
  });

  it('cuts a long minified line exactly as the per-join algorithm', () => {
    const json = JSON.stringify(buildLog(40).split('\n'));
    const tok = o200kTokenizer();
    for (const cap of [3000, 700]) {
      const chunks = chunkText(json, cap, tok);
      expect(chunks.length).toBeGreaterThan(cap === 3000 ? 3 : 15);
      expect(chunks).toEqual(oldChunkText(json, cap, tok));
    }
  });

  it('cuts a long hex line exactly as the per-join algorithm', () => {
    // No space or punctuation: the line splits only at its letter–digit edges.
    const hex = buildLog(24).replace(/[^0-9a-f]/g, '');
    const tok = o200kTokenizer();
    for (const cap of [300, 100]) {
      const chunks = chunkText(hex, cap, tok);
      expect(chunks.length).toBeGreaterThan(cap === 300 ? 10 : 30);
      expect(chunks).toEqual(oldChunkText(hex, cap, tok));
    }
  });

  it('cuts a line far over the cap with work linear in its length (times the search steps)', () => {
    // The reference estimator, charging every code unit it reads: a bounded count reads at most
    // 8 × (limit + 1) units. Asking "does this piece fit?" with a whole count of the rest of the
    // line made this quadratic (a megabyte of hex on one line took minutes).
    let work = 0;
    const spy: Tokenizer = {
      name: 'spy',
      count: (s) => {
        work += s.length;
        return referenceTokenizer.count(s);
      },
      countUpTo: (s, limit) => {
        work += Math.min(s.length, 8 * (limit + 1));
        return countUpTo(referenceTokenizer, s, limit);
      },
    };
    const line = 'x'.repeat(400_000);
    const chunks = chunkText(line, 100, spy);
    expect(chunks.join('')).toBe(line);
    expect(chunks.every((c) => referenceTokenizer.count(c) <= 100)).toBe(true);
    // The largest piece the estimator counts as 100 tokens: 403 code points.
    expect(chunks).toHaveLength(Math.ceil(line.length / 403));
    expect(work).toBeLessThan(64 * line.length);
  });

  it('still checks the join when a tokenizer does not declare counts additive', () => {
    // Counts distinct characters: far from additive, so every summed count would be wrong.
    const distinct: Tokenizer = { name: 'distinct', count: (s) => new Set(s).size };
    const t = 'ab\ncd\nab\nab\nef\n'.repeat(5);
    for (const cap of [3, 4, 6])
      expect(chunkText(t, cap, distinct)).toEqual(oldChunkText(t, cap, distinct));
  });
});
