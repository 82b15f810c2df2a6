import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the fake upstream received, exactly as it arrived. */
export interface Recorded {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body parsed as JSON (throws if it is not). */
  json(): Record<string, unknown>;
  /** Calls `fn` when the proxy closes this request's connection before an answer ended. */
  onClose?(fn: () => void): void;
}

/** What the fake upstream answers. */
export type Reply =
  | { kind: 'json'; status?: number; body: string; headers?: Record<string, string> }
  | { kind: 'sse'; chunks: string[]; status?: number }
  /** Sends these chunks of an event stream, then cuts the connection. */
  | { kind: 'drop'; chunks: string[] }
  /** Never answers (for timeouts). */
  | { kind: 'hang' }
  /** Sends the head and these chunks, then goes silent, the connection open. */
  | { kind: 'stall'; contentType: string; chunks: string[] };

/** A local HTTP server standing in for the model API; it records every request body. */
export interface FakeUpstream {
  url: string;
  /** Every request but the model lookups, in order. */
  requests: Recorded[];
  /** The model ids asked about with `GET /v1/models/{id}`, in order. */
  lookups: string[];
  close(): Promise<void>;
}

/** How the fake upstream answers `GET /v1/models/{id}`: by default every model exists. */
export type ModelsReply = (id: string) => Reply;

const MODEL_LOOKUP = /^\/v1\/models\/([^/?]+)$/;

/** A model object, as both APIs answer a lookup of a model they serve. */
export const knownModel: ModelsReply = (id) => ({
  kind: 'json',
  body: JSON.stringify({ id, type: 'model', object: 'model', display_name: id }),
});

/**
 * Starts a fake model API on a free loopback port. `reply` decides each answer from the
 * recorded request; model lookups (`GET /v1/models/{id}`) are answered by `models` and listed
 * in `lookups`.
 *
 * @example
 * const up = await startFakeUpstream(() => ({ kind: 'json', body: '{"ok":true}' }));
 */
export async function startFakeUpstream(
  reply: (r: Recorded) => Reply,
  models: ModelsReply = knownModel,
): Promise<FakeUpstream> {
  const requests: Recorded[] = [];
  const lookups: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const lookup = req.method === 'GET' ? MODEL_LOOKUP.exec(req.url ?? '') : null;
      const r: Recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        json: () => JSON.parse(body.toString('utf8')) as Record<string, unknown>,
        onClose: (fn) => {
          res.once('close', () => {
            if (!res.writableFinished) fn();
          });
        },
      };
      if (lookup) lookups.push(decodeURIComponent(lookup[1]!));
      else requests.push(r);
      const a = lookup ? models(decodeURIComponent(lookup[1]!)) : reply(r);
      if (a.kind === 'hang') return;
      if (a.kind === 'stall') {
        res.writeHead(200, { 'content-type': a.contentType });
        for (const c of a.chunks) res.write(c);
        return;
      }
      if (a.kind === 'json') {
        res.writeHead(a.status ?? 200, {
          'content-type': 'application/json',
          'request-id': 'req_fake_1',
          ...a.headers,
        });
        res.end(a.body);
        return;
      }
      res.writeHead(a.kind === 'sse' ? (a.status ?? 200) : 200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
      });
      const send = async (): Promise<void> => {
        for (const c of a.chunks) {
          res.write(c);
          await new Promise((ok) => setTimeout(ok, 2));
        }
        if (a.kind === 'sse') res.end();
        else res.socket?.destroy();
      };
      void send();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    lookups,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** A canned Anthropic Messages answer (JSON). */
export const ANTHROPIC_JSON = JSON.stringify({
  id: 'msg_fake_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Port 5433.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 4 },
});

/** A canned Anthropic Messages event stream, cut into chunks that split events mid-line. */
export const ANTHROPIC_SSE = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_fake_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: ping\ndata: {"type": "ping"}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Port "}}\n\nevent: content_block_delta\ndata: {"type":"content_bl',
  'ock_delta","index":0,"delta":{"type":"text_delta","text":"5433."}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":4}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
];

/** A canned OpenAI Chat Completions answer (JSON). */
export const OPENAI_JSON = JSON.stringify({
  id: 'chatcmpl-fake1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'gpt-4.1',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Port 5433.', refusal: null },
      finish_reason: 'stop',
      logprobs: null,
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
});

const chunk = (delta: Record<string, unknown>, finish: string | null): string =>
  `data: ${JSON.stringify({
    id: 'chatcmpl-fake2',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'gpt-4.1',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
  })}\n\n`;

/** A canned OpenAI Chat Completions event stream, cut mid-event once. */
export const OPENAI_SSE = (() => {
  const all = [
    chunk({ role: 'assistant', content: '' }, null),
    chunk({ content: 'Port ' }, null),
    chunk({ content: '5433.' }, null),
    chunk({}, 'stop'),
    'data: [DONE]\n\n',
  ].join('');
  const cut = all.indexOf('Port ') + 2;
  return [all.slice(0, cut), all.slice(cut)];
})();

/** Answers like the model API: count_tokens with a count of the body, the rest canned. */
export function cannedReply(
  stream: { anthropic: string[]; openai: string[] } = {
    anthropic: ANTHROPIC_SSE,
    openai: OPENAI_SSE,
  },
): (r: Recorded) => Reply {
  return (r) => {
    if (r.path.startsWith('/v1/messages/count_tokens')) {
      return { kind: 'json', body: JSON.stringify({ input_tokens: Math.ceil(r.body.length / 4) }) };
    }
    const streaming = r.headers['content-type'] === 'application/json' && r.json().stream === true;
    if (r.path.startsWith('/v1/messages')) {
      return streaming
        ? { kind: 'sse', chunks: stream.anthropic }
        : { kind: 'json', body: ANTHROPIC_JSON };
    }
    if (r.path.startsWith('/v1/chat/completions')) {
      return streaming
        ? { kind: 'sse', chunks: stream.openai }
        : { kind: 'json', body: OPENAI_JSON };
    }
    return { kind: 'json', body: JSON.stringify({ path: r.path, method: r.method }) };
  };
}
