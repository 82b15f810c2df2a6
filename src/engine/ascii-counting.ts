// A counter that hands the tokenizer ASCII text as a one-byte string. A payload with a single
// non-ASCII character anywhere is a two-byte string in V8, and so is every slice of it; o200k's
// pre-tokenizer and vocabulary lookups run about twice as fast on a one-byte copy of an ASCII
// line (measured on a generated build log), and the chunker counts every line of a payload.
import { countUpTo, derivedTokenizer, type Tokenizer } from '../extract/tokenizer.js';

const NON_ASCII = /[^\u0000-\u007f]/;

/** `s` itself, or when it is all ASCII a fresh copy (same characters, one byte each). */
export function asciiCopy(s: string): string {
  return NON_ASCII.test(s) ? s : Buffer.from(s, 'latin1').toString('latin1');
}

/**
 * A text this many times the limit (in code units) is not copied for a bounded count: the count
 * stops early, and the copy would cost the whole text.
 */
const COPY_PER_TOKEN = 16;

/** `tok` counting one-byte copies of ASCII text (same counts: the characters are the same). */
export function asciiCounting(tok: Tokenizer): Tokenizer {
  return derivedTokenizer(
    tok,
    (s) => tok.count(asciiCopy(s)),
    (s, limit) =>
      countUpTo(tok, s.length <= COPY_PER_TOKEN * (limit + 1) ? asciiCopy(s) : s, limit),
  );
}
