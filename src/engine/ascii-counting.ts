// A counter that hands the tokenizer ASCII text as a one-byte string. A payload with a single
// non-ASCII character anywhere is a two-byte string in V8, and so is every slice of it; o200k's
// pre-tokenizer and vocabulary lookups run about twice as fast on a one-byte copy of an ASCII
// line (measured on a generated build log), and the chunker counts every line of a payload.
import type { Tokenizer } from '../extract/tokenizer.js';

const NON_ASCII = /[^\u0000-\u007f]/;

/** `s` itself, or when it is all ASCII a fresh copy (same characters, one byte each). */
export function asciiCopy(s: string): string {
  return NON_ASCII.test(s) ? s : Buffer.from(s, 'latin1').toString('latin1');
}

/** `tok` counting one-byte copies of ASCII text (same counts: the characters are the same). */
export function asciiCounting(tok: Tokenizer): Tokenizer {
  const count = (s: string): number => tok.count(asciiCopy(s));
  if (!tok.additiveAtLineStarts) return { name: tok.name, count };
  return { name: tok.name, count, additiveAtLineStarts: true };
}
