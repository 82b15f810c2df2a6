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

/**
 * Walks the keys of one compound (a match of `COMPOUND`) in the order {@link rankedTerms} emits
 * them: `key` gets the keys of the compound and of its path segments, `part` each word-character
 * run whose keys come next (see `pushPart`).
 */
function walkCompound(compound: string, key: (k: string) => void, part: (p: string) => void) {
  if (!SEPARATORS.test(compound)) {
    part(compound);
    return;
  }
  const folded = foldToken(compound);
  if (keep(folded)) key(folded);
  const segments = compound.split(PATH_SEPARATORS);
  if (segments.length > 1) {
    for (const seg of segments) {
      if (SEPARATORS.test(seg)) {
        const f = foldToken(seg);
        if (keep(f)) key(f);
      }
    }
  }
  for (const p of compound.split(SEPARATORS)) {
    if (p.length > 0) part(p);
  }
}

/** The keys of one compound (a match of `COMPOUND`), in the order {@link rankedTerms} emits them. */
function keysOfCompound(compound: string): string[] {
  const out: string[] = [];
  walkCompound(
    compound,
    (k) => out.push(k),
    (p) => pushPart(out, p),
  );
  return out;
}

/**
 * Keys interned as small integers, so an analysis counts them in arrays instead of string maps.
 * An id means its key until {@link resetKeyIdsIfFull} empties the table (and the caches that
 * hold ids): only between analyses, never while ids are in use. `keySlots` is open addressing
 * on the keys' hashes, id + 1 per slot (0 empty), at most half full (one analysis can take more
 * ids than `KEY_ID_TABLE_SIZE`).
 */
let keySlots = new Int32Array(1 << 17);
let keyIdHash = new Int32Array(1024);
const keyOfIdTable: string[] = [];
/** Per id: the key holds a UTF-16 unit at or above U+D800 (see `sortedUniqueByCodePoint`). */
let keyIdIsHighTable = new Uint8Array(1024);
/** Per id: the key's first five characters packed in order (see {@link keyIdPrefix}), or -1. */
let keyIdPrefixTable = new Int32Array(1024);
/** Small enough that arrays indexed by id stay in the processor's caches. */
const KEY_ID_TABLE_SIZE = 65_536;
const HIGH_UNIT = /[\uD800-\uFFFF]/;

/** The key's own copy is interned: a key may be a slice of a long text. */
function internKey(key: string): number {
  const h = hashRange(key, 0, key.length);
  const mask = keySlots.length - 1;
  let slot = h & mask;
  for (let e = keySlots[slot]!; e !== 0; e = keySlots[slot]!) {
    if (keyIdHash[e - 1] === h && keyOfIdTable[e - 1] === key) return e - 1;
    slot = (slot + 1) & mask;
  }
  const own = Buffer.from(key, 'utf8').toString('utf8');
  const id = keyOfIdTable.length;
  keyOfIdTable.push(own);
  if (id >= keyIdIsHighTable.length) growKeyIdTables();
  keyIdHash[id] = h;
  keyIdIsHighTable[id] = HIGH_UNIT.test(own) ? 1 : 0;
  keyIdPrefixTable[id] = packedPrefix(own);
  keySlots[slot] = id + 1;
  if (2 * keyOfIdTable.length > keySlots.length) growKeySlots();
  return id;
}

function growKeySlots(): void {
  keySlots = new Int32Array(keySlots.length * 2);
  const mask = keySlots.length - 1;
  for (let id = 0; id < keyOfIdTable.length; id++) {
    let slot = keyIdHash[id]! & mask;
    while (keySlots[slot] !== 0) slot = (slot + 1) & mask;
    keySlots[slot] = id + 1;
  }
}

function growKeyIdTables(): void {
  const size = keyIdIsHighTable.length * 2;
  const high = new Uint8Array(size);
  high.set(keyIdIsHighTable);
  keyIdIsHighTable = high;
  const prefix = new Int32Array(size);
  prefix.set(keyIdPrefixTable);
  keyIdPrefixTable = prefix;
  const hash = new Int32Array(size);
  hash.set(keyIdHash);
  keyIdHash = hash;
}

/**
 * Key ids of word-character runs (see `pushPart`). A compound seen for the first time (a
 * timestamp, a path with a fresh number) is mostly made of runs seen before: its keys are
 * assembled from theirs. Holds ids, so it is emptied with the key ids.
 */
const partIds = new Map<string, readonly number[]>();
const PART_CACHE_SIZE = 50_000;

function idsOfPart(part: string): readonly number[] {
  if (part.length > MAX_CACHED_COMPOUND) {
    const keys: string[] = [];
    pushPart(keys, part);
    return keys.map(internKey);
  }
  let ids = partIds.get(part);
  if (ids === undefined) {
    const keys: string[] = [];
    pushPart(keys, part);
    ids = keys.map(internKey);
    if (partIds.size >= PART_CACHE_SIZE) partIds.clear();
    // Its own copy: a run is a slice of the text (see the compound cache).
    partIds.set(Buffer.from(part, 'utf8').toString('utf8'), ids);
  }
  return ids;
}

/** The ids of {@link keysOfCompound}`(compound)`, in order. */
function idsOfCompound(compound: string): number[] {
  const out: number[] = [];
  if (!SEPARATORS.test(compound)) {
    for (const k of keysOfCompound(compound)) out.push(internKey(k));
    return out;
  }
  walkCompound(
    compound,
    (k) => out.push(internKey(k)),
    (p) => {
      for (const id of idsOfPart(p)) out.push(id);
    },
  );
  return out;
}

/** Empties the key ids when the table is full; call it before an analysis takes ids. */
export function resetKeyIdsIfFull(): void {
  if (keyOfIdTable.length < KEY_ID_TABLE_SIZE) return;
  keySlots.fill(0);
  keyOfIdTable.length = 0;
  partIds.clear();
  clearCompoundCache();
}

/** The ASCII characters a key can hold (folded compounds), in code order: 6 bits each. */
const KEY_ASCII = '-./0123456789:@\\_abcdefghijklmnopqrstuvwxyz';
const KEY_ASCII_RANK = new Int8Array(128).fill(-1);
for (let i = 0; i < KEY_ASCII.length; i++) KEY_ASCII_RANK[KEY_ASCII.charCodeAt(i)] = i + 1;
const PACKED_CHARS = 5;

/** See {@link keyIdPrefix}. */
function packedPrefix(key: string): number {
  let v = 0;
  for (let i = 0; i < PACKED_CHARS; i++) {
    const c = i < key.length ? key.charCodeAt(i) : 0;
    const r = i < key.length ? (c < 128 ? KEY_ASCII_RANK[c]! : -1) : 0;
    if (r < 0) return -1;
    v = v * 64 + r;
  }
  // Characters past the fifth must be packable too, or the key is compared as a string only.
  for (let i = PACKED_CHARS; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 128 || KEY_ASCII_RANK[c]! < 0) return -1;
  }
  return v;
}

/**
 * The first five characters of an id's key as a number below 2^30, when the key is made of
 * {@link KEY_ASCII} only (else -1): keys with smaller numbers sort first; keys with equal
 * numbers need their strings compared.
 */
export const keyIdPrefix = (id: number): number => keyIdPrefixTable[id]!;

/** The key of an id from {@link pushKeyIds}. */
export const keyOfId = (id: number): string => keyOfIdTable[id]!;

/** True if the key of an id holds a UTF-16 unit at or above U+D800. */
export const keyIdIsHigh = (id: number): boolean => keyIdIsHighTable[id] === 1;

/** The number of ids handed out so far (every id is below it). */
export const keyIdCount = (): number => keyOfIdTable.length;

/**
 * Compounds seen recently with their keys' ids. A compound's keys depend on nothing but its
 * text, and the same words, paths and identifiers recur across a session's turns, so most
 * compounds of a fold are looked up rather than analysed. Emptied when full, so memory stays
 * bounded; the keys are the same either way.
 *
 * A record is flat in `pool`: hash, length, key count, the compound's UTF-16 units, then its
 * key ids. A lookup reads one slot and one record (a few cache lines), compares the compound
 * against the text in place, and holds no string of the text (so keeps no text alive).
 */
const SLOTS = 1 << 17;
const slots = new Int32Array(SLOTS);
const pool = new Int32Array(1 << 20);
let poolEnd = 0;
let cachedCount = 0;
const COMPOUND_CACHE_SIZE = 50_000;
/** Longer compounds (blobs, minified code) are rare and not worth keeping. */
const MAX_CACHED_COMPOUND = 128;

function clearCompoundCache(): void {
  slots.fill(0);
  poolEnd = 0;
  cachedCount = 0;
}

/** FNV-1a over the UTF-16 units of `text[start, end)`. */
function hashRange(text: string, start: number, end: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

function sameUnits(r: number, text: string, start: number, end: number): boolean {
  if (pool[r + 1] !== end - start) return false;
  for (let i = start, j = r + 3; i < end; i++, j++) {
    if (pool[j] !== text.charCodeAt(i)) return false;
  }
  return true;
}

/** Offset in `pool` of the record of the compound `text[start, end)`, added if missing. */
function compoundRecord(text: string, start: number, end: number): number {
  const h = hashRange(text, start, end);
  let slot = h & (SLOTS - 1);
  for (let rec = slots[slot]!; rec !== 0; rec = slots[slot]!) {
    if (pool[rec - 1] === h && sameUnits(rec - 1, text, start, end)) return rec - 1;
    slot = (slot + 1) & (SLOTS - 1);
  }
  const ids = idsOfCompound(text.slice(start, end));
  const size = 3 + (end - start) + ids.length;
  if (cachedCount >= COMPOUND_CACHE_SIZE || poolEnd + size > pool.length) {
    clearCompoundCache();
    slot = h & (SLOTS - 1);
  }
  const r = poolEnd;
  pool[r] = h;
  pool[r + 1] = end - start;
  pool[r + 2] = ids.length;
  for (let i = start, j = r + 3; i < end; i++, j++) pool[j] = text.charCodeAt(i);
  pool.set(ids, r + 3 + (end - start));
  poolEnd += size;
  cachedCount++;
  slots[slot] = r + 1;
  return r;
}

/** Appends the key ids of the compound `text[start, end)` to `out`. */
function pushCompoundIds(text: string, start: number, end: number, out: number[]): void {
  if (end - start > MAX_CACHED_COMPOUND) {
    for (const id of idsOfCompound(text.slice(start, end))) out.push(id);
    return;
  }
  const r = compoundRecord(text, start, end);
  const from = r + 3 + pool[r + 1]!;
  const to = from + pool[r + 2]!;
  for (let j = from; j < to; j++) out.push(pool[j]!);
}

/** Code classes of the ASCII compound scanner: 1 word character, 2 separator (see `COMPOUND`). */
const ASCII_CLASS = new Uint8Array(128);
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_') {
  ASCII_CLASS[c.charCodeAt(0)] = 1;
}
for (const c of './\\:@-') ASCII_CLASS[c.charCodeAt(0)] = 2;
const NON_ASCII = /[^\x00-\x7f]/;
const BACKSLASH = 92;
/** `n`, `r`, `t`: after a backslash, an escape (`ESCAPES`), which reads as a space. */
const isEscapeLetter = (c: number): boolean => c === 110 || c === 114 || c === 116;

/**
 * The class of unit `i` of an ASCII text once `ESCAPES` are spaces. A backslash is never an
 * escape's letter, so whether a unit belongs to an escape depends on its neighbours only.
 */
function asciiClass(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === BACKSLASH) return isEscapeLetter(text.charCodeAt(i + 1)) ? 0 : 2;
  if (isEscapeLetter(c) && i > 0 && text.charCodeAt(i - 1) === BACKSLASH) return 0;
  return ASCII_CLASS[c]!;
}

/** The end of the match of `COMPOUND` that starts at word unit `i` of an ASCII text. */
function asciiCompoundEnd(text: string, i: number): number {
  const n = text.length;
  let end = i;
  for (;;) {
    while (end < n && asciiClass(text, end) === 1) end++;
    let k = end;
    while (k < n && asciiClass(text, k) === 2) k++;
    if (k === end || k === n || asciiClass(text, k) !== 1) return end;
    end = k;
  }
}

/**
 * Appends the ids of {@link rankedTerms}`(text)` to `out`, in the same order, with repeats. An
 * ASCII text is scanned by hand (no match objects); any other goes through the regexes.
 */
export function pushKeyIds(text: string, out: number[]): void {
  // Tool output often carries JSON-escaped text: `\n` is a line break, not the letter n.
  if (NON_ASCII.test(text)) {
    for (const m of text.replace(ESCAPES, ' ').matchAll(COMPOUND)) {
      pushCompoundIds(m[0], 0, m[0].length, out);
    }
    return;
  }
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (asciiClass(text, i) !== 1) {
      i++;
      continue;
    }
    const end = asciiCompoundEnd(text, i);
    pushCompoundIds(text, i, end, out);
    i = end;
  }
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
  resetKeyIdsIfFull();
  const ids: number[] = [];
  pushKeyIds(text, ids);
  return ids.map(keyOfId);
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
const MAX_PROSE_WORD = Math.max(...[...PROSE_WORDS].map((w) => w.length));

/** `A`–`Z` or `a`–`z` (`| 0x20` lowers a capital and maps no other unit into `a`–`z`). */
function isAsciiLetter(c: number): boolean {
  const lower = c | 0x20;
  return lower >= 97 && lower <= 122;
}

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
  if (NON_ASCII.test(text)) {
    for (const m of text.matchAll(LETTERS)) {
      words++;
      if (PROSE_WORDS.has(m[0].toLowerCase())) stop++;
    }
    return { words, stop };
  }
  // ASCII: letter runs by hand, and only runs short enough to be a function word are cut out.
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isAsciiLetter(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    do i++;
    while (i < n && isAsciiLetter(text.charCodeAt(i)));
    words++;
    if (i - start <= MAX_PROSE_WORD && PROSE_WORDS.has(text.slice(start, i).toLowerCase())) stop++;
  }
  return { words, stop };
}

/** {@link proseRatio} from counts. */
export function proseShare(c: ProseCounts): number {
  // Too few words to tell prose from data: neutral.
  return c.words < MIN_PROSE_WORDS ? 0 : c.stop / c.words;
}
