import { describe, expect, it } from 'vitest';
import { groupBy } from './group-by.js';

describe('groupBy', () => {
  it('keeps groups in order of first appearance and items in input order', () => {
    const items = [
      { t: 2, id: 'a' },
      { t: 1, id: 'b' },
      { t: 2, id: 'c' },
    ];
    const groups = groupBy(items, (e) => e.t);
    expect([...groups.keys()]).toEqual([2, 1]);
    expect(groups.get(2)!.map((e) => e.id)).toEqual(['a', 'c']);
    expect(groups.get(1)!.map((e) => e.id)).toEqual(['b']);
    expect(groupBy([], (e) => e).size).toBe(0);
  });
});
