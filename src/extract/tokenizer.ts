import { createRequire } from 'node:module';
import { UsageError } from '../protocol/errors.js';
import { installHeapMerge } from './bpe-merge.js';
import { codePointLength } from './python-text.js';

/**
 * Counts tokens of a text. `o200k` (gpt-tokenizer) is the default; `reference` is
 * `max(1, codepoints // 4)`, the reference engine's estimator (use it to replay the vectors).
 *
 * @example
 * const t: Tokenizer = { name: 'words', count: (s) => s.split(/\s+/).length };
 */
export interface Tokenizer {
  readonly name: string;
  count(text: string): number;
  /**
   * Set when counts add across a safe line start (`isSafeLineStart`) and a safe split inside a
   * line (`isSafeSplitInLine`), so a chunker may sum the counts of lines and segments instead
   * of counting their join: true of o200k, whose pre-tokenizer never merges across either.
   * Absent means never assumed.
   */
  readonly additiveAtLineStarts?: boolean;
  /**
   * Optional: `count(text)` when that is at most `limit`, otherwise any number over `limit`,
   * found without counting the rest of the text. A chunker cutting a long line asks "does this
   * piece fit?" of pieces far over the cap; without it, each question costs a whole count.
   */
  countUpTo?(text: string, limit: number): number;
}

/**
 * A tokenizer counting as `tok` does, through other functions (a cache, a copy): its name and
 * its `additiveAtLineStarts` flag are kept, and `countUpTo` is set only when `tok` has one, so
 * a wrapper never claims what the tokenizer it wraps does not.
 *
 * @example
 * const known = derivedTokenizer(tok, (s) => (s === payload ? stored : tok.count(s)));
 */
export function derivedTokenizer(
  tok: Tokenizer,
  count: (text: string) => number,
  upTo?: (text: string, limit: number) => number,
): Tokenizer {
  return {
    name: tok.name,
    count,
    ...(tok.additiveAtLineStarts ? { additiveAtLineStarts: true } : {}),
    // Without a bounded form of its own, the wrapper's full count (never the wrapped one's, which
    // could disagree with it).
    ...(tok.countUpTo ? { countUpTo: upTo ?? ((t) => count(t)) } : {}),
  };
}

/**
 * `tok.count(text)` when it is at most `limit`, else a number over `limit` (early, when the
 * tokenizer can stop: see {@link Tokenizer.countUpTo}).
 *
 * @example
 * countUpTo(referenceTokenizer, 'x'.repeat(400), 10); // 11 (over the limit)
 * countUpTo(referenceTokenizer, 'abcdefgh', 10); // 2
 */
export function countUpTo(tok: Tokenizer, text: string, limit: number): number {
  return tok.countUpTo ? tok.countUpTo(text, limit) : tok.count(text);
}

/**
 * The reference estimator: `max(1, len(text) // 4)` with Python's code-point length.
 *
 * @example
 * referenceTokenizer.count('abcdefgh'); // 2
 * referenceTokenizer.count(''); // 1
 */
export const referenceTokenizer: Tokenizer = Object.freeze({
  name: 'reference',
  count: (text: string): number => Math.max(1, Math.floor(codePointLength(text) / 4)),
  countUpTo: (text: string, limit: number): number => {
    // The first 8 × (limit + 1) code units hold at least 4 × (limit + 1) code points (one is
    // at most two units), so their count alone is over the limit.
    const enough = 8 * (Math.max(0, limit) + 1);
    if (text.length <= enough) return Math.max(1, Math.floor(codePointLength(text) / 4));
    return Math.floor(codePointLength(text.slice(0, enough)) / 4);
  },
});

interface O200kModule {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
  isWithinTokenLimit(
    text: string,
    limit: number,
    options?: { disallowedSpecial?: Set<string> },
  ): number | false;
  default: { bytePairEncodingCoreProcessor: object };
}

// Text such as '<|endoftext|>' is counted as plain text, never as a special token (the library
// throws on it by default).
const PLAIN_TEXT = Object.freeze({ disallowedSpecial: new Set<string>() });

let o200kModule: O200kModule | undefined;

/** Loads the BPE ranks on first use only (~0.3 s), so CLI commands that never count stay fast. */
function loadO200k(): O200kModule {
  if (o200kModule === undefined) {
    const require = createRequire(import.meta.url);
    o200kModule = require('gpt-tokenizer/cjs/encoding/o200k_base') as O200kModule;
    // The library's merge is quadratic in a piece's length: one long run without a break (a
    // line of `=`, 100,000 × "A") stalled a fold for minutes. Same tokens, O(n log n).
    installHeapMerge(o200kModule.default.bytePairEncodingCoreProcessor);
  }
  return o200kModule;
}

/** Characters per piece when a text is counted in pieces (see {@link countO200k}). */
const COUNT_PIECE = 1 << 16;

/**
 * The o200k count of a text. The library's pre-tokenizer is a regular expression that runs out
 * of stack on some megabyte-long runs (5 MB of `A` then a NUL: `RangeError: Maximum call stack
 * size exceeded`); such a text is counted in pieces of 65,536 characters instead, cut anywhere
 * but inside a surrogate pair: deterministic, and off from o200k's own count by at most a few
 * tokens at each cut, where a fold used to fail.
 */
function countO200k(text: string): number {
  try {
    return loadO200k().countTokens(text, PLAIN_TEXT);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    return countInPieces(text);
  }
}

function countInPieces(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; ) {
    let j = Math.min(text.length, i + COUNT_PIECE);
    const c = text.charCodeAt(j - 1);
    if (j < text.length && c >= 0xd800 && c <= 0xdbff) j--;
    n += loadO200k().countTokens(text.slice(i, j), PLAIN_TEXT);
    i = j;
  }
  return n;
}

let o200kInstance: Tokenizer | undefined;

/**
 * The o200k_base tokenizer (GPT-4o family) from gpt-tokenizer. The vocabulary loads lazily and
 * synchronously on the first `count()`. Special-token text is counted as ordinary text.
 *
 * @example
 * o200kTokenizer().count('hello world'); // 2
 */
export function o200kTokenizer(): Tokenizer {
  if (o200kInstance === undefined) {
    o200kInstance = Object.freeze({
      name: 'o200k',
      count: (text: string): number => (text === '' ? 0 : countO200k(text)),
      additiveAtLineStarts: true,
      // Encodes piece by piece and stops at the first piece over the limit.
      countUpTo: (text: string, limit: number): number => {
        if (text === '') return 0;
        // The piece-by-piece path allocates per piece: a count with no limit takes the plain one.
        if (limit === Number.POSITIVE_INFINITY) return countO200k(text);
        let n: number | false;
        try {
          n = loadO200k().isWithinTokenLimit(text, limit, PLAIN_TEXT);
        } catch (e) {
          if (!(e instanceof RangeError)) throw e;
          n = countInPieces(text);
        }
        return n === false || n > limit ? limit + 1 : n;
      },
    });
  }
  return o200kInstance;
}

/**
 * Resolves a tokenizer option: a name, an instance, or the default (`o200k`).
 *
 * @example
 * resolveTokenizer('reference').name; // 'reference'
 * resolveTokenizer().name; // 'o200k'
 */
export function resolveTokenizer(t?: Tokenizer | 'o200k' | 'reference'): Tokenizer {
  if (t === undefined || t === 'o200k') return o200kTokenizer();
  if (t === 'reference') return referenceTokenizer;
  if (typeof t === 'object' && t !== null && typeof t.count === 'function') return t;
  throw new UsageError(`unknown tokenizer ${JSON.stringify(t)}: use 'o200k' or 'reference'`);
}
