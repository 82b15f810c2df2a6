import { describe, expect, it } from 'vitest';
import { whereTheyDiffer } from './pack.js';

describe('whereTheyDiffer', () => {
  it('shows a late difference, not two equal prefixes', () => {
    const event = (steps: string) =>
      `{"notes":[{"layer":"L1","persistent":false,"reason":"over budget with L2 empty: oldest recent turns left out of this pack only","steps":[${steps}]}],"turn":4,"type":"truncate"}`;
    const shown = whereTheyDiffer(event('99'), event('6,7'));
    expect(shown).toContain('"steps":[99]');
    expect(shown).toContain('"steps":[6,7]');
    expect(shown.startsWith('recorded …')).toBe(true);
  });

  it('shows the start of an event when the other side has none', () => {
    expect(whereTheyDiffer('{"type":"evict"}', undefined)).toBe(
      'recorded {"type":"evict"}, rebuilt nothing',
    );
  });
});
