import { createServer, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CONNECT_TIMEOUT_MS } from './pg/pg-client-options.js';
import { listSubStores } from './store-location.js';

describe('listSubStores', () => {
  it(
    'a server that accepts TCP but never answers is STORE_UNAVAILABLE after the connect timeout, not a hang',
    async () => {
      const sockets: Socket[] = [];
      const server = createServer((s) => sockets.push(s)).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      const { port } = server.address() as { port: number };
      const t0 = Date.now();
      try {
        await expect(
          listSubStores(`postgres://cf:secret@127.0.0.1:${port}/cf?store_id=web`, 'sessions'),
        ).rejects.toMatchObject({
          code: 'STORE_UNAVAILABLE',
          message: expect.stringContaining(`postgres://cf:***@127.0.0.1:${port}/cf`),
        });
        expect(Date.now() - t0).toBeLessThan(CONNECT_TIMEOUT_MS + 5_000);
      } finally {
        for (const s of sockets) s.destroy();
        server.close();
      }
    },
    CONNECT_TIMEOUT_MS + 10_000,
  );

  it('lists the directories under a local store, and nothing for a missing one', async () => {
    expect(await listSubStores('/nonexistent/contextfold-probe', 'sessions')).toEqual([]);
  });
});
