import { describe, expect, it } from 'vitest';
import { setOwnEntry } from './own-entry.js';

describe('setOwnEntry', () => {
  it('keeps a `__proto__` key as data, and leaves the prototype alone', () => {
    const out: Record<string, unknown> = {};
    setOwnEntry(out, '__proto__', { polluted: true });
    setOwnEntry(out, 'a', 1);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });
});
