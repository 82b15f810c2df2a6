import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_LOOKUP_RETRY_MS, ModelChecks } from './model-check.js';

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

describe('ModelChecks on a models route that does not settle the question', () => {
  // Before, a lookup answered 401/403 (a subscription token serving messages but not the models
  // route) was asked again on every call, simultaneous first calls each asked, and a lookup the
  // upstream did not answer held the call for the whole upstream timeout (10 minutes by default).
  let lookups = 0;
  let mode: 'auth' | 'hang' = 'auth';
  let up: http.Server;
  let upBase: URL;
  beforeAll(async () => {
    up = http.createServer((_req, res) => {
      lookups++;
      if (mode === 'hang') return; // never answers
      setTimeout(() => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"type":"error","error":{"type":"authentication_error","message":"no"}}');
      }, 20);
    });
    await new Promise<void>((ok) => up.listen(0, '127.0.0.1', ok));
    upBase = new URL(`http://127.0.0.1:${(up.address() as AddressInfo).port}`);
  });
  afterAll(async () => {
    up.closeAllConnections();
    await new Promise<void>((ok) => up.close(() => ok()));
  });

  it('asks once for simultaneous and later calls after a 401, and again once the retry time is past', async () => {
    mode = 'auth';
    lookups = 0;
    let now = 1000;
    const checks = new ModelChecks({ base: upBase, timeoutMs: 60_000, agents }, { now: () => now });
    const first = await Promise.all(
      [1, 2, 3, 4, 5].map(() => checks.check('anthropic', 'claude-x', { 'x-api-key': 'k' })),
    );
    expect(first.every((v) => v.kind === 'unverified')).toBe(true);
    for (let i = 0; i < 5; i++) await checks.check('anthropic', 'claude-x', { 'x-api-key': 'k' });
    expect(lookups).toBe(1);
    now += MODEL_LOOKUP_RETRY_MS + 1;
    await checks.check('anthropic', 'claude-x', { 'x-api-key': 'k' });
    expect(lookups).toBe(2);
  });

  it('gives up on a lookup past its time bound, not the upstream timeout, and remembers it', async () => {
    mode = 'hang';
    lookups = 0;
    const checks = new ModelChecks(
      { base: upBase, timeoutMs: 60_000, agents },
      { lookupTimeoutMs: 200 },
    );
    const t = performance.now();
    const v = await checks.check('openai', 'gpt-x', { authorization: 'Bearer k' });
    expect(performance.now() - t).toBeLessThan(5000);
    expect(v).toMatchObject({ kind: 'unverified', reason: expect.stringContaining('200 ms') });
    await checks.check('openai', 'gpt-x', { authorization: 'Bearer k' });
    expect(lookups).toBe(1);
  });
});
