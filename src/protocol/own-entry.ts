/**
 * Sets `key` on `target` as an own, enumerable data property. Plain assignment of `__proto__`
 * replaces the object's prototype instead, so a copy of parsed JSON holding that key (a tool
 * call's input, a message part) would silently lose it.
 *
 * @example
 * const out: Record<string, unknown> = {};
 * setOwnEntry(out, '__proto__', 1);
 * JSON.stringify(out); // '{"__proto__":1}'
 */
export function setOwnEntry(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}
