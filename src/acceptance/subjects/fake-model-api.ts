import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MODEL_REPLY } from '../subject.js';

/** A model request as the fake model API received it (only requests that arrived whole). */
export interface ReceivedRequest {
  path: string;
  body: Buffer;
}

/** A local stand-in for the model API (the proxy's upstream) that records what it receives. */
export interface FakeModelApi {
  url: string;
  readonly received: readonly ReceivedRequest[];
  close(): Promise<void>;
}

/** The answers of the fake model API: one text reply, {@link MODEL_REPLY}, in each dialect. */
const ANSWERS: Record<string, string> = {
  '/v1/messages': JSON.stringify({
    id: 'msg_acceptance',
    type: 'message',
    role: 'assistant',
    model: 'acceptance-model',
    content: [{ type: 'text', text: MODEL_REPLY }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  }),
  '/v1/chat/completions': JSON.stringify({
    id: 'chatcmpl-acceptance',
    object: 'chat.completion',
    created: 0,
    model: 'acceptance-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: MODEL_REPLY, refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }),
};

/** `GET /v1/models/{id}`: the proxy's check that the upstream serves a model. */
const MODEL_LOOKUP = /^\/v1\/models\/([^/]+)$/;

/**
 * Starts the fake model API on a free loopback port. It answers every Messages and Chat
 * Completions request with {@link MODEL_REPLY}, model lookups (`GET /v1/models/{id}`, not
 * recorded: they carry no conversation) with a model object, anything else with a 404, and
 * keeps each request body it received in full: what reaches the model is what it recorded.
 *
 * @example
 * const api = await startFakeModelApi();
 * const proxy = await startProxy({ upstream: api.url, port: 0 });
 */
export async function startFakeModelApi(): Promise<FakeModelApi> {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://upstream').pathname;
      const lookup = req.method === 'GET' ? MODEL_LOOKUP.exec(path) : null;
      if (lookup) {
        // The proxy asks once per model whether the upstream serves it (no conversation in it).
        const id = decodeURIComponent(lookup[1]!);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id, type: 'model', object: 'model', display_name: id }));
        return;
      }
      received.push({ path, body: Buffer.concat(chunks) });
      const answer = req.method === 'POST' ? ANSWERS[path] : undefined;
      res.writeHead(answer ? 200 : 404, { 'content-type': 'application/json' });
      res.end(answer ?? JSON.stringify({ error: `no ${req.method} ${path} here` }));
    });
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', ok);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
