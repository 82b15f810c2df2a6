import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelChecks } from './model-check.js';

// An upstream that compresses its answers when the request accepts it, as the providers' APIs
// behind a CDN do.
let server: http.Server;
let base: URL;
const agents = { http: new http.Agent(), https: new https.Agent() };

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const body = JSON.stringify({
      type: 'error',
      error: { type: 'not_found_error', message: `model: ${req.url?.split('/').pop()}` },
    });
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    res.writeHead(404, {
      'content-type': 'application/json',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
    res.end(gzip ? gzipSync(body) : body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  agents.http.destroy();
  await new Promise<void>((ok) => server.close(() => ok()));
});

describe('ModelChecks', () => {
  it("reads the upstream's not-found answer even when the client accepts compressed answers", async () => {
    // Before, the lookup forwarded the SDK's accept-encoding: gzip; the compressed 404 did not
    // parse as the provider's not-found shape, and the model was taken as "cannot tell"
    // (remembered for good): an unknown model was sent on and its call written to a store.
    const checks = new ModelChecks({ base, timeoutMs: 5000, agents });
    const v = await checks.check('anthropic', 'claude-nope', {
      'accept-encoding': 'gzip, deflate',
      'x-api-key': 'k',
    });
    expect(v.kind).toBe('unknown');
    if (v.kind === 'unknown') expect(v.body.toString('utf8')).toContain('not_found_error');
  });
});
