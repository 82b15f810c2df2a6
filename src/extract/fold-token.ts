/**
 * The token fold shared by identifiers, recall and scan: Python `lower()`, NFC, then delete
 * U+0307 (COMBINING DOT ABOVE, which `'İ'.lower()` produces) and map dotless `ı` to `i`, so
 * that Turkish spellings of the same word meet.
 */

const DOT_ABOVE_OR_DOTLESS_I = /[\u0307\u0131]/g;
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Folds one token for matching. JavaScript's `toLowerCase()` applies the same full Unicode
 * mapping as Python's `str.lower()`, final sigma included.
 *
 * @example
 * foldToken('İNCİ'); // 'inci'
 * foldToken('IŞIK'); // 'işik'
 * foldToken('ΟΔΟΣ'); // 'οδος'
 */
export function foldToken(s: string): string {
  // ASCII lowers to ASCII, which NFC leaves alone and which holds neither U+0307 nor U+0131.
  if (ASCII.test(s)) return s.toLowerCase();
  const lowered = s.toLowerCase().normalize('NFC');
  return lowered.replace(DOT_ABOVE_OR_DOTLESS_I, (c) => (c === '\u0131' ? 'i' : ''));
}

/** The reference stopwords (English and Turkish), dropped from identifiers. */
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'the for with this that from are was were will can has had have what which how did you all ' +
    'any not but we is it on at to of in do be or an as if by so no up my ve ile için olan bir ' +
    'bu şu daha gibi kadar diye veya ya ama fakat lakin çünkü böyle nasıl neden ne hangi var ' +
    'yok şey mi mu mü mı and'
  ).split(' '),
);

/**
 * True if a token is a stopword in its raw form or after {@link foldToken}.
 *
 * @example
 * isStopword('The'); // true
 * isStopword('nasıl'); // true (raw form; its fold 'nasil' is not listed)
 */
export function isStopword(raw: string, folded: string = foldToken(raw)): boolean {
  return STOPWORDS.has(folded) || STOPWORDS.has(raw);
}
