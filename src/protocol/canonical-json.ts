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
 * Python's escaping with `ensure_ascii=False` is exactly JSON.stringify's for well-formed
 * strings: short forms for \b \f \n \r \t, lower-case `\u00XX` for other C0 controls,
 * everything from U+007F up raw. Only lone surrogates differ, and they cannot be hashed.
 */
function escapeString(s: string): string {
  // `isWellFormed` is a fast scan; the regex only runs to name the offending unit.
  const m = (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    ? null
    : LONE_SURROGATE.exec(s);
  if (m) {
    throw new TypeError(
      `canonical JSON cannot represent a lone surrogate (U+${m[0].charCodeAt(0).toString(16).toUpperCase()}) at index ${m.index}`,
    );
  }
  return JSON.stringify(s);
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
      const pad = indent > 0 ? `\n${' '.repeat(indent * (depth + 1))}` : '';
      const end = indent > 0 ? `\n${' '.repeat(indent * depth)}` : '';
      const colon = indent > 0 ? ': ' : ':';
      if (Array.isArray(value)) {
        if (value.length === 0) return '[]';
        return `[${value.map((v) => pad + serialize(v, indent, depth + 1)).join(',')}${end}]`;
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort(compareCodePoints);
      if (keys.length === 0) return '{}';
      return `{${keys
        .map((k) => pad + escapeString(k) + colon + serialize(obj[k], indent, depth + 1))
        .join(',')}${end}}`;
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
