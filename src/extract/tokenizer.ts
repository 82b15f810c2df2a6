import { createRequire } from 'node:module';
import { UsageError } from '../protocol/errors.js';
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
});

interface O200kModule {
  countTokens(text: string, options?: { disallowedSpecial?: Set<string> }): number;
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
  }
  return o200kModule;
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
      count: (text: string): number =>
        text === '' ? 0 : loadO200k().countTokens(text, PLAIN_TEXT),
      additiveAtLineStarts: true,
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
