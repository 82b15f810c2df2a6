import { createHash } from 'node:crypto';

/** A JSON value as it may occur in a hashed IPCF object: integers only, no floats. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/**
 * Compares two strings by Unicode code point, the order Python's `sorted()` uses.
 * JavaScript's default sort compares UTF-16 units, which misorders astral characters
 * against U+E000–U+FFFF.
 *
 * @example
 * ['\u{1F600}', '\uFF01'].sort(compareCodePoints); // ['\uFF01', '\u{1F600}']
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs === ys) return x - y;
    // A surrogate (astral code point) sorts after every BMP unit.
    return xs ? 1 : -1;
  }
  return a.length - b.length;
}

/**
 * Sorts and deduplicates strings by code point. Returns a new array.
 *
 * @example
 * sortedUnique(['b', 'a', 'b']); // ['a', 'b']
 */
export function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(compareCodePoints);
}

const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Strings at least this long have their escaped form remembered (see {@link escapeString}): a
 * fold serialises a turn's payload up to five times (the projection hash, the artifact hash,
 * the node file), as `raw_content` and as `normalized_content`, mostly the same text.
 */
const MEMO_MIN = 256;
/** Longer strings are not remembered, so the memo holds at most a few hundred KB. */
const MEMO_MAX = 64 * 1024;
/** The last long strings escaped and their escaped forms (a two-slot ring). */
const memoIn: string[] = ['', ''];
const memoOut: string[] = ['', ''];
let memoNext = 0;

/**
 * Python's escaping with `ensure_ascii=False` is exactly JSON.stringify's for well-formed
 * strings: short forms for \b \f \n \r \t, lower-case `\u00XX` for other C0 controls,
 * everything from U+007F up raw. Only lone surrogates differ, and they cannot be hashed.
 * The escaped form is a function of the string's content alone, so the last two long strings
 * are remembered with it: a hit compares contents (`===`), never identities.
 */
function escapeString(s: string): string {
  const long = s.length >= MEMO_MIN && s.length <= MEMO_MAX;
  if (long) {
    if (s === memoIn[0]) return memoOut[0]!;
    if (s === memoIn[1]) return memoOut[1]!;
  }
  // `isWellFormed` is a fast scan; the regex only runs to name the offending unit.
  const m = (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    ? null
    : LONE_SURROGATE.exec(s);
  if (m) {
    throw new TypeError(
      `canonical JSON cannot represent a lone surrogate (U+${m[0].charCodeAt(0).toString(16).toUpperCase()}) at index ${m.index}`,
    );
  }
  const out = JSON.stringify(s);
  if (long) {
    memoIn[memoNext] = s;
    memoOut[memoNext] = out;
    memoNext ^= 1;
  }
  return out;
}

/**
 * An object's keys with a defined value, in code point order. UTF-16 unit order (the native
 * sort's) is the same unless a key holds a unit at or above U+D800, which keys almost never do.
 */
function sortedKeys(obj: Record<string, unknown>): string[] {
  const all = Object.keys(obj);
  let keys = all;
  for (let i = 0; i < all.length; i++) {
    if (obj[all[i]!] === undefined) {
      keys = all.filter((k) => obj[k] !== undefined);
      break;
    }
  }
  for (const k of keys) {
    for (let i = 0; i < k.length; i++) {
      if (k.charCodeAt(i) >= 0xd800) return keys.sort(compareCodePoints);
    }
  }
  return keys.sort();
}

/** `pads[d]`: the newline and indentation that open a line at depth `d` (pretty form). */
const pads: string[] = [];
const padAt = (indent: number, depth: number): string => {
  if (indent === 0) return '';
  if (indent !== 2) return `\n${' '.repeat(indent * depth)}`;
  let p = pads[depth];
  if (p === undefined) {
    p = `\n${' '.repeat(2 * depth)}`;
    pads[depth] = p;
  }
  return p;
};

/**
 * True if every element is a string with a UTF-8 form; throws {@link escapeString}'s error at
 * the first lone surrogate, as an element-by-element serialisation would.
 */
function allStrings(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'string') return false;
    if (!(v as unknown as { isWellFormed(): boolean }).isWellFormed()) escapeString(v);
  }
  return true;
}

/**
 * The pretty form of a list of well-formed strings at `depth`: `JSON.stringify`'s own line
 * breaks are the only raw newlines (a string's are escaped), so indenting each by the depth
 * gives the element-by-element form.
 */
function prettyStrings(values: readonly string[], indent: number, depth: number): string {
  const text = JSON.stringify(values, null, indent);
  return depth === 0 ? text : text.replaceAll('\n', padAt(indent, depth));
}

function serialize(value: unknown, indent: number, depth: number): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isSafeInteger(value)) {
        throw new TypeError(`canonical JSON allows only safe integers, got ${value}`);
      }
      return String(value);
    case 'string':
      return escapeString(value);
    case 'object': {
      const pad = padAt(indent, depth + 1);
      const end = padAt(indent, depth);
      if (Array.isArray(value)) {
        if (value.length === 0) return '[]';
        if (allStrings(value)) {
          // A term list: one native call writes it, with the same escaping (the strings are
          // well-formed) and, in the pretty form, only its line breaks indented to this depth.
          return indent === 0 ? JSON.stringify(value) : prettyStrings(value, indent, depth);
        }
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          out += pad + serialize(value[i], indent, depth + 1);
        }
        return `${out + end}]`;
      }
      const obj = value as Record<string, unknown>;
      const keys = sortedKeys(obj);
      if (keys.length === 0) return '{}';
      const colon = indent > 0 ? ': ' : ':';
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i]!;
        if (i > 0) out += ',';
        out += pad + escapeString(k) + colon + serialize(obj[k], indent, depth + 1);
      }
      return `${out + end}}`;
    }
    default:
      throw new TypeError(`canonical JSON cannot represent a ${typeof value}`);
  }
}

/**
 * Serialises a value exactly as Python's
 * `json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`:
 * the byte form every IPCF hash is computed over. Keys whose value is `undefined` are omitted.
 *
 * @example
 * canonicalJson({ b: 1, a: 'é' }); // '{"a":"é","b":1}'
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, 0, 0);
}

/**
 * Serialises a value as the reference engine writes its files: indent 2, keys sorted by code
 * point, non-ASCII raw, no trailing newline. The formatting never affects a hash.
 *
 * @example
 * prettyJson({ a: [1] }); // '{\n  "a": [\n    1\n  ]\n}'
 */
export function prettyJson(value: unknown): string {
  return serialize(value, 2, 0);
}

/**
 * Hex SHA-256 of a string (UTF-8) or bytes.
 *
 * @example
 * sha256Hex('abc').length; // 64
 */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Hex SHA-256 of the canonical JSON of a value.
 *
 * @example
 * canonicalSha256({ b: 1, a: 2 }) === sha256Hex('{"a":2,"b":1}'); // true
 */
export function canonicalSha256(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
