import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FoldInput } from '../engine/types.js';
import { durableFloorProbe } from './durable-floor.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const inputs = (n: number): FoldInput[] =>
  Array.from({ length: n }, (_, i) => ({
    stepId: i,
    summary: `tool: step ${i}`,
    content: `$ psql -p ${5400 + i}\nport ${5400 + i} open\r\n\u0000binary ${i}`,
  }));

describe('durableFloorProbe', () => {
  it('writes a node file per input, in rounds, and leaves nothing behind', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'cf-floor-'));
    dirs.push(parent);
    // More than one round of 1,024, so the second round's files count too.
    const floor = await durableFloorProbe(parent, inputs(1030));
    expect(floor.turns).toBe(1030);
    expect(floor.files).toBe(1030);
    for (const k of [
      'per_turn_ms',
      'cpu_per_turn_ms',
      'build_per_turn_ms',
      'write_per_turn_ms',
    ] as const) {
      expect(Number.isFinite(floor[k]) && floor[k] >= 0).toBe(true);
    }
    expect(floor.per_turn_ms).toBeCloseTo(floor.build_per_turn_ms + floor.write_per_turn_ms, 2);
    expect(readdirSync(parent)).toEqual([]);
  });

  it('removes its directory when a node cannot be built', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'cf-floor-'));
    dirs.push(parent);
    const bad = [{ stepId: 1, summary: 'lone surrogate \uD800', content: 'x' }];
    await expect(durableFloorProbe(parent, bad)).rejects.toThrow();
    expect(readdirSync(parent)).toEqual([]);
  });
});
