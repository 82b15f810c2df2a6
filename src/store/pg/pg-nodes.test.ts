import { describe, expect, it } from 'vitest';
import { NodeNotLoadedError } from '../index-backend.js';
import type { PgConnections } from './pg-connections.js';
import { PgNodes } from './pg-nodes.js';

/** Connections whose only query answers every asked step with a body of `size` bytes. */
function fakeConnections(size: number): PgConnections {
  const client = {
    query: async (_sql: string, [, steps]: [string, number[]]) => ({
      rows: steps.map((step) => ({ step: String(step), body: Buffer.alloc(size, 0x61) })),
    }),
  };
  return {
    withClient: async (_what: string, fn: (c: typeof client) => Promise<unknown>) => fn(client),
  } as unknown as PgConnections;
}

describe('PgNodes', () => {
  it('keeps at most 64 MB of earlier loads: large nodes are not hoarded 256 at a time', async () => {
    const nodes = new PgNodes(fakeConnections(8 * 1024 * 1024), 's');
    for (let step = 1; step <= 20; step++) await nodes.load([step]);
    expect(nodes.bytes(20)?.length).toBe(8 * 1024 * 1024);
    expect(nodes.bytes(13)).not.toBeNull();
    expect(() => nodes.bytes(12)).toThrow(NodeNotLoadedError);
  });

  it('keeps every node of the last load, whatever its size', async () => {
    const nodes = new PgNodes(fakeConnections(40 * 1024 * 1024), 's');
    await nodes.load([1]);
    await nodes.load([2, 3]);
    expect(nodes.bytes(2)?.length).toBe(40 * 1024 * 1024);
    expect(nodes.bytes(3)?.length).toBe(40 * 1024 * 1024);
    expect(() => nodes.bytes(1)).toThrow(NodeNotLoadedError);
  });

  it('keeps up to 256 small nodes', async () => {
    const nodes = new PgNodes(fakeConnections(10), 's');
    for (let step = 1; step <= 300; step++) await nodes.load([step]);
    expect(nodes.bytes(45)).not.toBeNull();
    expect(() => nodes.bytes(44)).toThrow(NodeNotLoadedError);
  });

  it('keeps only the last load for a copy (it held 64 MB of pages already written)', async () => {
    const nodes = new PgNodes(fakeConnections(10), 's');
    nodes.keepOnlyLastLoad = true;
    await nodes.load([1, 2]);
    await nodes.load([3]);
    expect(nodes.bytes(3)?.length).toBe(10);
    expect(() => nodes.bytes(2)).toThrow(NodeNotLoadedError);
  });
});
