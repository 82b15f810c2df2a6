import { compareCodePoints } from '../protocol/canonical-json.js';

// Without the u flag a class matches UTF-16 units: any surrogate or U+E000–U+FFFF unit.
const HIGH_UNIT = /[\uD800-\uFFFF]/;

/**
 * Sorts and deduplicates by code point, like `sortedUnique`, but uses the engine's native sort
 * when no string holds a unit at or above U+D800: UTF-16 unit order and code point order differ
 * only between a surrogate and a unit in U+E000–U+FFFF, and the native comparison is several
 * times faster than a JavaScript comparator on term lists.
 *
 * @example
 * sortedUniqueByCodePoint(['b', 'a', 'b']); // ['a', 'b']
 * sortedUniqueByCodePoint(['\u{1F600}', '\uFF01']); // ['\uFF01', '\u{1F600}']
 */
export function sortedUniqueByCodePoint(values: Iterable<string>): string[] {
  const out = values instanceof Set ? [...values] : [...new Set(values)];
  for (const s of out) if (HIGH_UNIT.test(s)) return out.sort(compareCodePoints);
  return out.sort();
}
