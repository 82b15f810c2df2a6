import { foldToken } from '../extract/fold-token.js';

/**
 * Retrieval keys of the ranked page-in. They are derived from the payload text in memory and
 * never enter a cold node or a projection, so projection v2 stays reference-exact.
 *
 * A text becomes a bag of keys: whole compounds (`priv/static/app.js`, `v0.85.2`,
 * `phoenix_live_view`), their path segments (`app.js`), the word parts (`priv`, `static`, `app`,
 * `js`) and the identifier sub-words (`SignalScorer` → `signalscorer`, `signal`, `scorer`). Word
 * keys are lightly stemmed (`tests` → `test`, `failed` → `fail`) so inflections meet; longer
 * variants (`postgres` ~ `postgresql`) are met by prefix expansion at query time.
 */

/** A run of word characters joined by path / dotted / dashed / colon separators. */
const COMPOUND = /[\p{L}\p{N}_]+(?:[./\\:@-]+[\p{L}\p{N}_]+)*/gu;
const SEPARATORS = /[./\\:@-]+/u;
const PATH_SEPARATORS = /[/\\]+|:+/u;
/** Identifier sub-words: `HTTPServer2Go` → `HTTP`, `Server`, `2`, `Go`. */
const SUBWORD = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[\p{L}\p{M}]+/gu;
const DIGITS = /^\p{N}+$/u;
const ESCAPES = /\\[nrt]/gu;
const HAS_LETTER = /\p{L}/u;

/** Keys longer than this are blobs (base64, minified code), not things a person asks about. */
export const MAX_KEY_LENGTH = 64;

/**
 * English function words and the filler of questions ("what did you ...", "I want the exact
 * ..."). They say nothing about which turn holds an answer. Rarity weighting handles the rest.
 */
export const RANKED_STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before ' +
    'being below between both but by can could did do does doing done down during each else ' +
    'ever every few for from further get got had has have having he her here hers him his how ' +
    'i if in into is it its itself just let me more most much my no nor not now of off on once ' +
    'only or other our ours out over own please same she should so some such than that the ' +
    'their them then there these they this those through to too under until up upon us very ' +
    'was we were what when where which while who whom why will with would yes yet you your ' +
    'yours ve ll re don didn doesn isn wasn weren won wouldn couldn shouldn haven hasn hadn ' +
    'aren whats what whats thats there theres heres lets im ive youre youve weve wed ' +
    'tell show remember recall want know like say said ask asked exact exactly actually really ' +
    'again still already one ones thing things way something anything'
  ).split(' '),
);

/**
 * Light suffix stemming for word keys, so inflections share a key. Deliberately crude: it only
 * has to map the forms of one word onto one key; prefix expansion covers the rest.
 *
 * @example
 * stemWord('tests'); // 'test'
 * stemWord('configured'); // 'configur'
 * stemWord('libraries'); // 'library'
 */
export function stemWord(word: string): string {
  let w = word;
  if (w.length <= 3 || !HAS_LETTER.test(w) || DIGITS.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(?:ss|us|is)$/u.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = undouble(w.slice(0, -3));
  else if (w.length > 4 && w.endsWith('ed')) w = undouble(w.slice(0, -2));
  if (w.length > 4 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  const n = w.length;
  if (n >= 4 && w[n - 1] === w[n - 2] && !/[lsz]/u.test(w[n - 1] ?? '')) return w.slice(0, -1);
  return w;
}

function keep(key: string): boolean {
  return key.length >= 2 && key.length <= MAX_KEY_LENGTH && !RANKED_STOPWORDS.has(key);
}

function pushWord(out: string[], raw: string): void {
  const folded = foldToken(raw);
  if (folded.length < 2) return;
  if (DIGITS.test(folded)) {
    if (keep(folded)) out.push(folded);
    return;
  }
  if (RANKED_STOPWORDS.has(folded)) return;
  const stem = stemWord(folded);
  if (keep(stem)) out.push(stem);
}

/** Adds the keys of one word-character run (`phoenix_live_view`, `SignalScorer`, `v0`). */
function pushPart(out: string[], part: string): void {
  const subwords = part.match(SUBWORD) ?? [];
  if (subwords.length <= 1) {
    pushWord(out, part);
    return;
  }
  // The whole identifier is a key of its own: `signalscorer` is rarer than `scorer`; its
  // joined form lets `session_live` meet `SessionLive`.
  const whole = foldToken(part);
  if (keep(whole)) out.push(whole);
  const joined = foldToken(subwords.join(''));
  if (joined !== whole && keep(joined)) out.push(joined);
  for (const s of subwords) pushWord(out, s);
}

/** The keys of one compound (a match of `COMPOUND`), in the order {@link rankedTerms} emits them. */
function keysOfCompound(compound: string): string[] {
  const out: string[] = [];
  if (!SEPARATORS.test(compound)) {
    pushPart(out, compound);
    return out;
  }
  const folded = foldToken(compound);
  if (keep(folded)) out.push(folded);
  const segments = compound.split(PATH_SEPARATORS);
  if (segments.length > 1) {
    for (const seg of segments) {
      if (SEPARATORS.test(seg)) {
        const f = foldToken(seg);
        if (keep(f)) out.push(f);
      }
    }
  }
  for (const part of compound.split(SEPARATORS)) {
    if (part.length > 0) pushPart(out, part);
  }
  return out;
}

/**
 * Compounds seen recently and their keys. A compound's keys depend on nothing but its text, and
 * the same words, paths and identifiers recur across a session's turns, so most compounds of a
 * fold are looked up rather than analysed (about half of an analysis's time). Emptied when full,
 * so memory stays bounded; the keys are the same either way.
 */
const compoundCache = new Map<string, readonly string[]>();
const COMPOUND_CACHE_SIZE = 50_000;
/** Longer compounds (blobs, minified code) are rare and not worth keeping. */
const MAX_CACHED_COMPOUND = 128;

function cachedKeysOfCompound(compound: string): readonly string[] {
  if (compound.length > MAX_CACHED_COMPOUND) return keysOfCompound(compound);
  let keys = compoundCache.get(compound);
  if (keys === undefined) {
    // A match is a slice of the text it was found in, and keeps that whole text alive (a
    // megabyte line, say) for as long as it is referenced: the cache keeps its own copy, and the
    // keys are slices of the copy. A compound never holds a lone surrogate (it is letters,
    // digits and separators), so the UTF-8 round trip copies it exactly.
    const own = Buffer.from(compound, 'utf8').toString('utf8');
    keys = keysOfCompound(own);
    if (compoundCache.size >= COMPOUND_CACHE_SIZE) compoundCache.clear();
    compoundCache.set(own, keys);
  }
  return keys;
}

/**
 * The retrieval keys of a text, in text order, with repeats (repeats are term frequency).
 *
 * @example
 * rankedTerms('Read priv/static/assets/app.js: 806.5KB');
 * // ['read', 'priv/static/assets/app.js', 'app.js', 'priv', 'static', 'asset', 'app', 'js',
 * //  '806.5kb', '806', '5kb', 'kb']  (sub-words of `5KB`: `5` is one character and dropped)
 */
export function rankedTerms(text: string): string[] {
  const out: string[] = [];
  // Tool output often carries JSON-escaped text: `\n` is a line break, not the letter n.
  for (const m of text.replace(ESCAPES, ' ').matchAll(COMPOUND)) {
    for (const k of cachedKeysOfCompound(m[0])) out.push(k);
  }
  return out;
}

/** {@link rankedTerms} without the compound cache (the definition the cache is tested against). */
export function rankedTermsUncached(text: string): string[] {
  const out: string[] = [];
  for (const m of text.replace(ESCAPES, ' ').matchAll(COMPOUND)) out.push(...keysOfCompound(m[0]));
  return out;
}

/** Distinct keys of a text in first-occurrence order. */
export function distinctRankedTerms(text: string): string[] {
  return [...new Set(rankedTerms(text))];
}

const LETTERS = /\p{L}+/gu;

/**
 * Function words of English prose that code and tool output rarely use (no `if`, `for`, `in`,
 * `do`, `end`, `and`, `or`, `not`, `is`, `as`, `with`, `from`: those are keywords too).
 */
const PROSE_WORDS: ReadonlySet<string> = new Set(
  (
    'the a an of to that this these those was were been be will would should could i we you ' +
    'me our your my it its there here which what how let now need also just so but about ' +
    'have has had am are than they them their can because'
  ).split(' '),
);
const MIN_PROSE_WORDS = 60;

/**
 * Share of a text's words that are function words: high for prose (narration, questions), low
 * for data (tool output, code, listings). Used as a prior: questions ask for data.
 *
 * @example
 * proseRatio('I will now check the file for the value'); // ≈ 0.67
 * proseRatio('port: 1100\nhost: 127.0.0.1'); // 0
 */
export function proseRatio(text: string): number {
  return proseShare(proseCounts(text));
}

/** Words and function words of a text (see {@link proseRatio}); counts of parts add up. */
export interface ProseCounts {
  words: number;
  stop: number;
}

/**
 * The counts behind {@link proseRatio}. Letter runs never cross a line break, so the counts of
 * a text's lines (or of runs of whole lines) sum to the text's own.
 */
export function proseCounts(text: string): ProseCounts {
  let words = 0;
  let stop = 0;
  for (const m of text.matchAll(LETTERS)) {
    words++;
    if (PROSE_WORDS.has(m[0].toLowerCase())) stop++;
  }
  return { words, stop };
}

/** {@link proseRatio} from counts. */
export function proseShare(c: ProseCounts): number {
  // Too few words to tell prose from data: neutral.
  return c.words < MIN_PROSE_WORDS ? 0 : c.stop / c.words;
}
