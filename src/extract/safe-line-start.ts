// Where an o200k count splits: the chunker adds the counts of the two sides of such a line start
// instead of counting the joined text again, which is what made a hydrate of a large log cost
// about three tokenizer passes over it.

/** Horizontal white space (`\s` but not CR or LF), then the first character that is not `\s`. */
const LEAD = /[^\S\r\n]*\S/y;

/**
 * Whether `count(x + y) === count(x) + count(y)` holds under o200k when `x` is `text` before
 * `start` and `y` is `text` from `start` to `end`: `start` follows a `\n`, and `y` opens with
 * horizontal white space (no CR or LF) and then, before `end`, a character that is not white
 * space; when that white space is empty, the character is not `/`.
 *
 * Why this is exact: o200k counts the BPE of each piece its pre-tokenizer regex cuts, and that
 * regex has no look-behind, so pieces from `start` on are those of `y` alone; the only pieces
 * that can read past a `\n` are `\s*[\r\n]+` (which ends after the last CR or LF of its white
 * space run, and `y`'s leading run has none) and the `[\r\n/]*` tail of a punctuation piece
 * (stopped by any character of `y` but CR, LF or `/`). So `x`'s pieces, read in `x + y`, end
 * where they end in `x` alone, and `start` is a piece boundary of both.
 *
 * @example
 * isSafeLineStart('a;\nb\n', 3, 5); // true
 * isSafeLineStart('a;\n/b\n', 3, 6); // false: ';\n/' is one piece
 */
export function isSafeLineStart(text: string, start: number, end: number): boolean {
  if (start <= 0 || text.charCodeAt(start - 1) !== 10) return false;
  LEAD.lastIndex = start;
  if (!LEAD.test(text) || LEAD.lastIndex > end) return false;
  return LEAD.lastIndex - start > 1 || text.charCodeAt(start) !== 47;
}
