import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { relay } from './relay.js';

/** An upstream response standing in for node's IncomingMessage: an event stream fed by hand. */
function upstream(): PassThrough & { complete: boolean } {
  const res = new PassThrough() as PassThrough & Record<string, unknown>;
  res.statusCode = 200;
  res.headers = { 'content-type': 'text/event-stream' };
  res.rawHeaders = ['content-type', 'text/event-stream'];
  res.complete = false;
  return res as unknown as PassThrough & { complete: boolean };
}

async function relayed(
  chunks: Buffer[],
): Promise<{ body: Buffer; outcome: string | null; ms: number }> {
  const res = upstream();
  let outcome: string | null = null;
  const t0 = performance.now();
  const response = await relay(res as unknown as IncomingMessage, {
    api: 'anthropic',
    headers: {},
    onEnd: (o) => {
      outcome = o;
    },
  });
  const reading = response.arrayBuffer();
  for (const c of chunks) res.write(c);
  res.complete = true;
  res.end();
  const body = Buffer.from(await reading);
  return { body, outcome, ms: performance.now() - t0 };
}

describe('relay of an event stream', () => {
  it('relays every byte, events split anywhere, with LF and CRLF ends', async () => {
    const text =
      'event: a\ndata: {"x":1}\n\nevent: b\r\ndata: {"y":2}\r\n\r\n: ping\n\nevent: c\ndata: {}\n\n';
    const bytes = Buffer.from(text);
    for (const size of [1, 2, 3, 5, 7, 64]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      const { body, outcome } = await relayed(chunks);
      expect(body.toString()).toBe(text);
      expect(outcome).toBe('ok');
    }
  });

  it('relays one huge event in time linear in its size (4 MB in 1 KiB chunks)', async () => {
    const event = Buffer.from(
      `event: content_block_delta\ndata: {"text":"${'x'.repeat(4 * 1024 * 1024)}"}\n\n`,
    );
    const chunks: Buffer[] = [];
    for (let i = 0; i < event.length; i += 1024) chunks.push(event.subarray(i, i + 1024));
    // Each chunk joined to all the bytes before it took tens of seconds here.
    const { body, ms } = await relayed(chunks);
    expect(body.equals(event)).toBe(true);
    expect(ms).toBeLessThan(4000);
  }, 20_000);
});
