// Where an o200k count splits: the chunker adds the counts of the two sides of such a line start
// instead of counting the joined text again, which is what made a hydrate of a large log cost
// about three tokenizer passes over it.

/** Horizontal white space (`\s` but not CR or LF), then the first character that is not `\s`. */
const LEAD = /[^\S\r\n]*\S/y;

/** A letter, a digit or white space: a character no punctuation piece of o200k ends with. */
const NOT_PUNCTUATION = /[\s\p{L}\p{N}]/uy;

/**
 * Whether the line break before `start` can start no punctuation piece's `[\r\n/]*` tail: the
 * CR and LF run before `start` opens the text or follows a letter, a digit or white space.
 */
function breakAfterWord(text: string, start: number): boolean {
  let r = start;
  while (r > 0 && (text.charCodeAt(r - 1) === 10 || text.charCodeAt(r - 1) === 13)) r--;
  if (r === 0) return true;
  const low = text.charCodeAt(r - 1);
  // The character before the run, whole when it is a surrogate pair.
  NOT_PUNCTUATION.lastIndex = low >= 0xdc00 && low <= 0xdfff && r >= 2 ? r - 2 : r - 1;
  return NOT_PUNCTUATION.test(text);
}

/**
 * Whether `count(x + y) === count(x) + count(y)` holds under o200k when `x` is `text` before
 * `start` and `y` is `text` from `start` to `end`: `start` follows a `\n`, and `y` opens with
 * horizontal white space (no CR or LF) and then, before `end`, a character that is not white
 * space; when that white space is empty and the character is `/`, `x`'s closing line break
 * follows a letter, a digit or white space (or is all of `x`).
 *
 * Why this is exact: o200k counts the BPE of each piece its pre-tokenizer regex cuts, and that
 * regex has no look-behind, so pieces from `start` on are those of `y` alone; the only pieces
 * that can read past a `\n` are `\s*[\r\n]+` (which ends after the last CR or LF of its white
 * space run, and `y`'s leading run has none) and the `[\r\n/]*` tail of a punctuation piece
 * (stopped by any character of `y` but CR, LF or `/`, and never holding a line break that
 * follows a letter, a digit or white space). So `x`'s pieces, read in `x + y`, end where they
 * end in `x` alone, and `start` is a piece boundary of both.
 *
 * @example
 * isSafeLineStart('a;\nb\n', 3, 5); // true
 * isSafeLineStart('a\n/b\n', 2, 5); // true
 * isSafeLineStart('a;\n/b\n', 3, 6); // false: ';\n/' is one piece
 */
export function isSafeLineStart(text: string, start: number, end: number): boolean {
  if (start <= 0 || text.charCodeAt(start - 1) !== 10) return false;
  LEAD.lastIndex = start;
  if (!LEAD.test(text) || LEAD.lastIndex > end) return false;
  if (LEAD.lastIndex - start > 1 || text.charCodeAt(start) !== 47) return true;
  return breakAfterWord(text, start);
}
