/**
 * Python `str` semantics the reference engine relies on, written out for JavaScript.
 *
 * Python's `re` on `str` and JavaScript's regexes disagree on `\w`, `\d`, `\s`, `\b` and the
 * multiline `^`, and `str.rstrip()` strips a different set than `String.prototype.trimEnd()`.
 * Every class here was checked code point by code point against CPython 3.11 (Unicode 14);
 * the only differences are characters added to Unicode after 14.0.
 */

/** Body of a character class matching Python's `\w` on `str`: letters, numbers and `_`. */
export const PY_WORD = '\\p{L}\\p{N}_';

/** Body of a character class matching Python's `[^\W\d]`: `\w` without decimal digits (Nd). */
export const PY_WORD_NOT_DIGIT = '\\p{L}\\p{Nl}\\p{No}_';

/**
 * Body of a character class matching Python's `\s` (and what `str.strip()` removes): includes
 * U+001C–U+001F and U+0085, excludes U+FEFF and U+200B.
 */
export const PY_SPACE =
  '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** Python's `\b` before a word character: the previous character is not `\w`. */
export const PY_WORD_START = `(?<![${PY_WORD}])`;

/** Python's `\b` after a word character: the next character is not `\w`. */
export const PY_WORD_END = `(?![${PY_WORD}])`;

/** Python's multiline `^`: start of text or just after `\n` (not `\r`, U+2028 or U+2029). */
export const PY_LINE_START = '(?<![^\\n])';

/** Every Python whitespace character is in the BMP, so a per-unit test is exact. */
function isPySpaceUnit(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/**
 * True if the code point is whitespace for Python (`str.isspace()`).
 *
 * @example
 * isPythonWhitespace(0x1f); // true — JavaScript's `\s` says false
 * isPythonWhitespace(0xfeff); // false — JavaScript's `\s` says true
 */
export function isPythonWhitespace(codePoint: number): boolean {
  return codePoint <= 0xffff && isPySpaceUnit(codePoint);
}

/**
 * Python's `str.rstrip()` with no argument: removes trailing Python whitespace.
 *
 * @example
 * pythonRstrip('x \u001f\u0085'); // 'x'
 * pythonRstrip('x\uFEFF'); // 'x\uFEFF'
 */
export function pythonRstrip(s: string): string {
  let end = s.length;
  while (end > 0 && isPySpaceUnit(s.charCodeAt(end - 1))) end--;
  return end === s.length ? s : s.slice(0, end);
}

/**
 * Python's `str.strip()` with no argument: removes leading and trailing Python whitespace.
 *
 * @example
 * pythonStrip('\u3000 ls -la \r'); // 'ls -la'
 */
export function pythonStrip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isPySpaceUnit(s.charCodeAt(start))) start++;
  while (end > start && isPySpaceUnit(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/**
 * Length in code points, as Python's `len()` counts a `str` (a surrogate pair counts once).
 *
 * @example
 * codePointLength('a\u{1F680}'); // 2 (JavaScript's .length is 3)
 */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * True if the string holds a lone surrogate, i.e. it is not valid Unicode and has no UTF-8 form.
 *
 * @example
 * hasLoneSurrogate('\uD800x'); // true
 * hasLoneSurrogate('\u{1F680}'); // false
 */
export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}
