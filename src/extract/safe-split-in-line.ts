// Where an o200k count splits inside a line: the chunker cuts a line over the cap by a binary
// search on its prefixes, and sums the counts of the segments between such splits instead of
// counting each prefix again (which made a megabyte on one line cost minutes).

/** The code point ending at `p` is not white space, and the one starting at `p` is (no CR, LF). */
const SPACE_AFTER_WORD = /(?<=\S)[^\S\r\n]/uy;
/** The code point ending at `p` is a letter or digit, and the one at `p` punctuation (no `'`). */
const PUNCTUATION_AFTER_WORD = /(?<=[\p{L}\p{N}])[^\s\p{L}\p{N}\p{M}']/uy;
/** A letter after a digit, or a digit after a letter (hex, base64, `v2beta3`). */
const LETTER_DIGIT_EDGE = /(?<=\p{N})\p{L}|(?<=\p{L})\p{N}/uy;

/**
 * Whether `count(x + y) === count(x) + count(y)` holds under o200k when `x` is `text` before
 * `p` and `y` is `text` from `p` (up to any end after `p`): `y` opens with horizontal white
 * space after a character that is not white space, with punctuation other than `'` after a
 * letter or digit, with a letter after a digit, or with a digit after a letter.
 *
 * Why this is exact: pieces from `p` on are those of `y` alone (the regex has no look-behind);
 * a piece of `x` reads its first character of `y` only to see that it does not go on (a letter
 * run, a contraction, a digit group, a punctuation run or its `[\r\n/]*` tail stop at white
 * space; letters, digits and their contractions stop at punctuation other than `'`; a letter
 * run stops at a digit and a digit group at a letter, and no piece holds both), as it would at
 * the end of `x`, and no white space piece of `x` reaches `p`. A long line of hex or base64,
 * which has no space or punctuation, splits at its letter–digit edges.
 *
 * @example
 * isSafeSplitInLine('foo bar', 3); // true
 * isSafeSplitInLine('{"key":1}', 5); // true
 * isSafeSplitInLine('a3f9', 1); // true: a digit after a letter
 * isSafeSplitInLine('foo  bar', 4); // false: white space on both sides
 */
export function isSafeSplitInLine(text: string, p: number): boolean {
  if (p <= 0 || p >= text.length) return false;
  SPACE_AFTER_WORD.lastIndex = p;
  if (SPACE_AFTER_WORD.test(text)) return true;
  PUNCTUATION_AFTER_WORD.lastIndex = p;
  if (PUNCTUATION_AFTER_WORD.test(text)) return true;
  LETTER_DIGIT_EDGE.lastIndex = p;
  return LETTER_DIGIT_EDGE.test(text);
}
