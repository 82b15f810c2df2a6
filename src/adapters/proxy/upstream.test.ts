import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { connectUpstream, UpstreamError, type UpstreamTarget } from './upstream.js';

const agents = {
  http: new http.Agent({ keepAlive: true }),
  https: new https.Agent({ keepAlive: true }),
};
afterAll(() => {
  agents.http.destroy();
  agents.https.destroy();
});

/**
 * A raw HTTP/1.1 server that answers the first request on every connection with keep-alive and
 * drops the connection when a second request arrives on it (a server that closed an idle
 * connection just as the client reused it).
 */
async function dropsReusedConnections(): Promise<{
  url: URL;
  connections: () => number;
  close(): void;
}> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    let requests = 0;
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      while (buf.includes('\r\n\r\n')) {
        const head = buf.slice(0, buf.indexOf('\r\n\r\n'));
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < head.length + 4 + length) return;
        buf = buf.slice(head.length + 4 + length);
        if (++requests > 1) {
          socket.destroy();
          return;
        }
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      }
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`),
    connections: () => connections,
    close: () => server.close(),
  };
}

const read = async (res: http.IncomingMessage): Promise<string> => {
  let s = '';
  for await (const c of res) s += String(c);
  return s;
};

describe('connectUpstream', () => {
  it('sends again on a fresh connection when a pooled one was closed by the server', async () => {
    const up = await dropsReusedConnections();
    const target: UpstreamTarget = { base: up.url, timeoutMs: 5000, agents };
    for (let i = 0; i < 3; i++) {
      const req = await connectUpstream(target, up.url, 'POST', {
        'content-type': 'application/json',
      });
      const res = await req.send(Buffer.from('{"n":1}'));
      expect(await read(res)).toBe('ok');
    }
    expect(up.connections()).toBe(3);
    up.close();
  });

  it('reports an unreachable upstream before anything is sent', async () => {
    const url = new URL('http://127.0.0.1:9/v1/messages');
    const e = await connectUpstream({ base: url, timeoutMs: 5000, agents }, url, 'POST', {}).catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toMatchObject({ failure: 'unreachable' });
    expect((e as Error).message).toMatch(
      /^cannot reach the upstream http:\/\/127\.0\.0\.1:9: ECONNREFUSED$/,
    );
  });
});
