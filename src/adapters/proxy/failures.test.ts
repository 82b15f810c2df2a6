import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { replaySession } from '../../harness/replay.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import type { ProxyLogLine } from './call-log.js';
import { type RunningProxy, startProxy } from './server.js';
import { sessionStoreDir } from './session-pool.js';
import {
  ANTHROPIC_SSE,
  cannedReply,
  type FakeUpstream,
  type ModelsReply,
  OPENAI_SSE,
  type Recorded,
  type Reply,
  startFakeUpstream,
} from './test-utils/fake-upstream.js';

const tmp = tempDir('cf-proxy-fail-');
afterAll(() => tmp.cleanup());
let n = 0;

interface Rig {
  proxy: RunningProxy;
  up: FakeUpstream | null;
  logs: ProxyLogLine[];
  dir: string;
  anthropic: Anthropic;
  openai: OpenAI;
  close(): Promise<void>;
}

async function rig(
  reply: ((r: Recorded) => Reply) | null,
  { models, ...options }: { maxBodyBytes?: number; timeoutMs?: number; models?: ModelsReply } = {},
): Promise<Rig> {
  const up = reply ? await startFakeUpstream(reply, models) : null;
  const logs: ProxyLogLine[] = [];
  const dir = join(tmp.dir, `r${n++}`);
  // Port 9 (discard) on loopback: nothing listens, the connection is refused.
  const proxy = await startProxy({
    upstream: up?.url ?? 'http://127.0.0.1:9',
    port: 0,
    dir,
    budget: 4000,
    onLog: (l) => logs.push(l),
    ...options,
  });
  return {
    proxy,
    up,
    logs,
    dir,
    anthropic: new Anthropic({ apiKey: 'sk-ant-x', baseURL: proxy.url, maxRetries: 0 }),
    openai: new OpenAI({ apiKey: 'sk-x', baseURL: proxy.env.OPENAI_BASE_URL, maxRetries: 0 }),
    async close() {
      await proxy.close();
      await up?.close();
    },
  };
}

const ask = { model: 'claude-sonnet-4-5', max_tokens: 16 };
const hello = [{ role: 'user' as const, content: 'Which port does the database use?' }];

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function caught(p: Promise<unknown>): Promise<{ status?: number; error?: unknown } & Error> {
  try {
    await p;
  } catch (e) {
    return e as { status?: number } & Error;
  }
  throw new Error('expected a rejection');
}

/** The store holds nothing at all (no session was opened). */
/** Waits until `done()` holds, at most about 2 s (then the test's expectation says what is missing). */
async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((ok) => setTimeout(ok, 20));
}

function storeIsEmpty(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir, { recursive: true }).length === 0;
}

async function expectConsistent(dir: string, session: string): Promise<void> {
  const r = await replaySession({ dir: sessionStoreDir(dir, session) });
  expect(r.matches).toBe(true);
}

describe('bad input is refused in the provider error shape, before anything is written', () => {
  it('malformed JSON, missing messages, a bad block, a body over the limit', async () => {
    const r = await rig(cannedReply(), { maxBodyBytes: 2000 });
    const url = `${r.proxy.url}/v1/messages`;
    const cases: [string, number, string][] = [
      ['{"model": "m", "messages": [', 400, 'not valid JSON'],
      ['[1, 2]', 400, 'JSON object'],
      ['{"model": "m", "max_tokens": 5}', 400, 'messages: required'],
      [
        JSON.stringify({ ...ask, messages: [{ role: 'user', content: [{ text: 'x' }] }] }),
        400,
        'has no "type"',
      ],
      [
        JSON.stringify({ ...ask, messages: [{ role: 'tool', content: 'x' }] }),
        400,
        '"role" must be',
      ],
      [
        JSON.stringify({ ...ask, messages: [{ role: 'user', content: 'x'.repeat(3000) }] }),
        413,
        '2000-byte limit',
      ],
    ];
    for (const [body, status, message] of cases) {
      const before = r.logs.length;
      const got = await post(url, body);
      expect(got.status, body.slice(0, 40)).toBe(status);
      expect(got.json.type).toBe('error');
      const error = got.json.error as { type: string; message: string };
      expect(error.type).toBe(status === 413 ? 'request_too_large' : 'invalid_request_error');
      expect(error.message).toContain(message);
      expect(r.logs.slice(before)).toMatchObject([{ kind: 'refused', status }]);
    }
    // A compressed body: it said "not valid JSON".
    const gz = await post(url, JSON.stringify({ ...ask, messages: hello }), {
      'content-encoding': 'gzip',
    });
    expect(gz.status).toBe(415);
    expect((gz.json.error as { message: string }).message).toBe(
      'request body has content-encoding gzip: the proxy folds plain JSON bodies; send it uncompressed',
    );
    // Through the SDKs: their usual error classes, with the status.
    const big = [{ role: 'user' as const, content: 'y'.repeat(3000) }];
    expect((await caught(r.anthropic.messages.create({ ...ask, messages: big }))).status).toBe(413);
    const oa = await caught(r.openai.chat.completions.create({ model: 'gpt-4.1', messages: big }));
    expect(oa).toBeInstanceOf(OpenAI.APIError);
    expect((oa as InstanceType<typeof OpenAI.APIError>).code).toBe('request_too_large');
    expect(r.up!.requests).toHaveLength(0);
    expect(storeIsEmpty(r.dir)).toBe(true);
    await r.close();
  });

  it('an unreachable upstream: 502 in the provider shape, one log line, nothing written', async () => {
    const r = await rig(null);
    const a = await caught(r.anthropic.messages.create({ ...ask, messages: hello }));
    expect(a.status).toBe(502);
    expect(a).toBeInstanceOf(Anthropic.APIError);
    expect(JSON.stringify((a as InstanceType<typeof Anthropic.APIError>).error)).toContain(
      'api_error',
    );
    const o = await caught(r.openai.chat.completions.create({ model: 'gpt-4.1', messages: hello }));
    expect(o.status).toBe(502);
    expect((o as InstanceType<typeof OpenAI.APIError>).code).toBe('upstream_unreachable');
    expect(r.logs).toMatchObject([
      { kind: 'refused', status: 502, outcome: 'unreachable' },
      { kind: 'refused', status: 502, outcome: 'unreachable' },
    ]);
    expect(storeIsEmpty(r.dir)).toBe(true);
    await r.close();
  });
});

describe('upstream errors come back as the provider sent them and never corrupt the store', () => {
  it("an unknown model: the upstream's 404 in each provider shape, one log line, nothing written, nothing sent", async () => {
    const anthropicMissing =
      '{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"},"request_id":"req_1"}';
    const openAiMissing =
      '{"error":{"message":"The model \'gpt-nope\' does not exist","type":"invalid_request_error","param":"model","code":"model_not_found"}}';
    const r = await rig(cannedReply(), {
      models: (id) =>
        id.endsWith('-nope')
          ? {
              kind: 'json',
              status: 404,
              body: id.startsWith('gpt') ? openAiMissing : anthropicMissing,
            }
          : { kind: 'json', body: JSON.stringify({ id, type: 'model' }) },
    });
    const a = await caught(
      r.anthropic.messages.create({ ...ask, model: 'claude-nope', messages: hello }),
    );
    expect(a).toBeInstanceOf(Anthropic.NotFoundError);
    expect(JSON.stringify((a as InstanceType<typeof Anthropic.APIError>).error)).toContain(
      'not_found_error',
    );
    const o = await caught(
      r.openai.chat.completions.create({ model: 'gpt-nope', messages: hello }),
    );
    expect(o.status).toBe(404);
    expect((o as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_found');
    expect(r.logs).toMatchObject([
      { kind: 'refused', status: 404, outcome: 'unknown_model' },
      { kind: 'refused', status: 404, outcome: 'unknown_model' },
    ]);
    expect(r.logs.every((l) => l.kind === 'refused' && l.error.includes('-nope'))).toBe(true);
    expect(storeIsEmpty(r.dir)).toBe(true);
    expect(r.up!.requests).toEqual([]);
    // Asked again (an unknown model is not remembered), then a known model goes through and is
    // asked about once for both calls.
    await caught(r.anthropic.messages.create({ ...ask, model: 'claude-nope', messages: hello }));
    await r.anthropic.messages.create({ ...ask, messages: hello });
    await r.anthropic.messages.create({ ...ask, messages: hello });
    expect(r.up!.lookups).toEqual(['claude-nope', 'gpt-nope', 'claude-nope', ask.model]);
    expect(r.logs.at(-1)).toMatchObject({ kind: 'call', status: 200 });
    await r.close();
  });

  it('an upstream without the models route: the call goes ahead and the upstream decides (404 passed through); the store stays consistent', async () => {
    const notFound =
      '{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"},"request_id":"req_1"}';
    const r = await rig(
      (req) =>
        req.body.includes('claude-nope')
          ? { kind: 'json', status: 404, body: notFound }
          : cannedReply()(req),
      { models: () => ({ kind: 'json', status: 404, body: '{"detail":"Not Found"}' }) },
    );
    const e = await caught(
      r.anthropic.messages.create({ ...ask, model: 'claude-nope', messages: hello }),
    );
    expect(e.status).toBe(404);
    expect(e).toBeInstanceOf(Anthropic.NotFoundError);
    expect(r.logs).toMatchObject([{ kind: 'call', status: 404, outcome: 'ok' }]);
    const session = (r.logs[0] as { session: string }).session;
    await expectConsistent(r.dir, session);
    // The same conversation goes on with a known model; the route's absence is remembered.
    await r.anthropic.messages.create({ ...ask, messages: hello });
    await r.anthropic.messages.create({ ...ask, messages: hello });
    expect(r.logs.at(-1)).toMatchObject({ kind: 'call', status: 200, session });
    expect(r.up!.lookups).toEqual(['claude-nope', ask.model]);
    await expectConsistent(r.dir, session);
    await r.close();
  });

  it('a 500, a timeout and a stream cut off midway: provider errors, turns closed, store consistent', async () => {
    let mode: 'error' | 'hang' | 'drop' | 'ok' = 'error';
    const r = await rig(
      (req) => {
        if (mode === 'error') {
          return {
            kind: 'json',
            status: 500,
            body: '{"type":"error","error":{"type":"api_error","message":"boom"}}',
          };
        }
        if (mode === 'hang') return { kind: 'hang' };
        if (mode === 'drop') {
          const cut = req.path.includes('chat')
            ? OPENAI_SSE[0]!
            : ANTHROPIC_SSE.slice(0, 3).join('');
          return { kind: 'drop', chunks: [cut] };
        }
        return cannedReply()(req);
      },
      { timeoutMs: 400 },
    );
    const e500 = await caught(r.anthropic.messages.create({ ...ask, messages: hello }));
    expect(e500.status).toBe(500);
    expect(e500).toBeInstanceOf(Anthropic.InternalServerError);

    mode = 'hang';
    const slow = await caught(r.anthropic.messages.create({ ...ask, messages: hello }));
    expect(slow.status).toBe(504);
    expect(JSON.stringify((slow as InstanceType<typeof Anthropic.APIError>).error)).toContain(
      'timeout_error',
    );

    mode = 'drop';
    const dropped = await caught(
      (async () => {
        const s = await r.anthropic.messages.create({ ...ask, messages: hello, stream: true });
        for await (const _ of s) {
          // read until it breaks
        }
      })(),
    );
    expect(dropped).toBeInstanceOf(Anthropic.APIError);
    expect(dropped.message).toContain('ended early');
    const droppedOpenAi = await caught(
      (async () => {
        const s = await r.openai.chat.completions.create({
          model: 'gpt-4.1',
          messages: hello,
          stream: true,
        });
        for await (const _ of s) {
          // read until it breaks
        }
      })(),
    );
    expect(droppedOpenAi).toBeInstanceOf(OpenAI.APIError);

    mode = 'ok';
    await r.anthropic.messages.create({ ...ask, messages: hello });
    expect(r.logs.map((l) => [l.kind, l.status, l.outcome])).toEqual([
      ['call', 500, 'ok'],
      ['call', 504, 'timeout'],
      ['call', 200, 'dropped'],
      ['call', 200, 'dropped'],
      ['call', 200, 'ok'],
    ]);
    for (const s of new Set(r.logs.map((l) => (l as { session: string }).session))) {
      await expectConsistent(r.dir, s);
    }
    await r.close();
  });

  it('an upstream silent past --timeout after its response began: a timeout, not "ended early"', async () => {
    // Before, the client got 502 api_error "the upstream response ended early" (a stream: an
    // error event saying so), and the log line said 200 dropped.
    const r = await rig(
      (req) =>
        req.json().stream === true
          ? {
              kind: 'stall',
              contentType: 'text/event-stream',
              chunks: [req.path.includes('chat') ? OPENAI_SSE[0]! : ANTHROPIC_SSE[0]!],
            }
          : { kind: 'stall', contentType: 'application/json', chunks: ['{"id":'] },
      { timeoutMs: 300 },
    );
    const json = await caught(r.anthropic.messages.create({ ...ask, messages: hello }));
    expect(json.status).toBe(504);
    expect(json.message).toContain('timeout_error');
    expect(json.message).toContain('sent nothing for 300 ms');
    const read = async (s: AsyncIterable<unknown>): Promise<void> => {
      for await (const _ of s) {
        // read until it breaks
      }
    };
    const streamed = await caught(
      (async () =>
        read(await r.anthropic.messages.create({ ...ask, messages: hello, stream: true })))(),
    );
    expect(streamed.message).toContain('timeout_error');
    const oa = await caught(
      (async () =>
        read(
          await r.openai.chat.completions.create({
            model: 'gpt-4.1',
            messages: hello,
            stream: true,
          }),
        ))(),
    );
    expect(oa).toBeInstanceOf(OpenAI.APIError);
    expect(oa.message).toContain('sent nothing for 300 ms');
    expect(r.logs.map((l) => [l.kind, l.status, l.outcome])).toEqual([
      ['call', 504, 'timeout'],
      ['call', 200, 'timeout'],
      ['call', 200, 'timeout'],
    ]);
    for (const s of new Set(r.logs.map((l) => (l as { session: string }).session))) {
      await expectConsistent(r.dir, s);
    }
    await r.close();
  });

  it('a passthrough stream cut off midway: the client sees it broken, with only the bytes the upstream sent', async () => {
    // Before, the HTTP server printed the error's stack on stderr and wrote an "Error: …" line
    // into the client's body before closing it.
    const sent = ANTHROPIC_SSE.slice(0, 2).join('');
    const r = await rig(() => ({ kind: 'drop', chunks: [sent] }));
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const res = await fetch(`${r.proxy.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"model":"gpt-4.1","input":"hi","stream":true}',
      });
      const reader = res.body!.getReader();
      const got: Uint8Array[] = [];
      let broken = false;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          got.push(value);
        }
      } catch {
        broken = true;
      }
      expect(broken).toBe(true);
      expect(Buffer.concat(got).toString()).toBe(sent);
      for (let i = 0; i < 50 && r.logs.length === 0; i++)
        await new Promise((ok) => setTimeout(ok, 20));
      expect(r.logs).toMatchObject([{ kind: 'passthrough', outcome: 'dropped' }]);
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
      await r.close();
    }
  });

  it('a client that stops reading a stream for longer than --timeout gets all of it', async () => {
    // Before, the paused upstream counted as silent: the stream was cut after --timeout.
    const event = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${'y'.repeat(200_000)}"}}\n\n`;
    const chunks = [
      ANTHROPIC_SSE[0]!,
      ...Array.from({ length: 40 }, () => event),
      ANTHROPIC_SSE[6]!,
    ];
    const r = await rig(() => ({ kind: 'sse', chunks }), { timeoutMs: 300 });
    const res = await fetch(`${r.proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...ask, messages: hello, stream: true }),
    });
    const reader = res.body!.getReader();
    let bytes = 0;
    for (let n = 0; ; n++) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (n === 2) await new Promise((ok) => setTimeout(ok, 1000));
    }
    expect(bytes).toBe(Buffer.byteLength(chunks.join('')));
    expect(r.logs).toMatchObject([{ kind: 'call', outcome: 'ok' }]);
    await r.close();
  });

  it('a client that walks away mid-stream: the call is closed and logged', async () => {
    const r = await rig(() => ({ kind: 'sse', chunks: [...ANTHROPIC_SSE, ...ANTHROPIC_SSE] }));
    const stream = await r.anthropic.messages.create({ ...ask, messages: hello, stream: true });
    for await (const _ of stream) break;
    await waitUntil(() => r.logs.length > 0);
    expect(r.logs).toMatchObject([{ kind: 'call', outcome: 'client_closed' }]);
    await expectConsistent(r.dir, (r.logs[0] as { session: string }).session);
    await r.close();
  });

  it('a client that gives up before the answer starts: the upstream call is cancelled, the lock released', async () => {
    // Before, the upstream call ran on (billed) until the upstream answered or --timeout, and a
    // retry of the same conversation waited for it.
    let calls = 0;
    let upstreamClosed = false;
    const r = await rig((rec) => {
      calls++;
      if (calls > 1) return cannedReply()(rec);
      rec.onClose?.(() => {
        upstreamClosed = true;
      });
      return { kind: 'hang' };
    });
    await expect(
      r.anthropic.messages.create(
        { ...ask, messages: hello },
        { signal: AbortSignal.timeout(300), maxRetries: 0 },
      ),
    ).rejects.toThrow();
    await waitUntil(() => r.logs.length > 0);
    expect(r.logs).toMatchObject([{ kind: 'call', outcome: 'client_closed' }]);
    // The upstream sees its connection close a moment after the proxy cancelled the call.
    await waitUntil(() => upstreamClosed);
    expect(upstreamClosed).toBe(true);
    // The same conversation again: it waited for the lock the hung call held.
    await r.anthropic.messages.create({ ...ask, messages: hello });
    await r.close();
  });

  it('a client that gives up while a non-streamed answer is arriving: the upstream call is cancelled', async () => {
    // Before, once the upstream's status line was in, the proxy read the rest of the answer
    // whatever the client did: the upstream call ran on to its end (or --timeout), holding the
    // conversation's lock, and the log said 200 ok.
    let calls = 0;
    let upstreamClosed = false;
    const r = await rig(
      (rec) => {
        calls++;
        if (calls > 1) return cannedReply()(rec);
        rec.onClose?.(() => {
          upstreamClosed = true;
        });
        return { kind: 'stall', contentType: 'application/json', chunks: ['{"id":"msg_1",'] };
      },
      { timeoutMs: 60_000 },
    );
    await expect(
      r.anthropic.messages.create(
        { ...ask, messages: hello },
        { signal: AbortSignal.timeout(300), maxRetries: 0 },
      ),
    ).rejects.toThrow();
    await waitUntil(() => upstreamClosed);
    expect(upstreamClosed).toBe(true);
    await waitUntil(() => r.logs.length > 0);
    expect(r.logs).toMatchObject([{ kind: 'call', outcome: 'client_closed' }]);
    await expectConsistent(r.dir, (r.logs[0] as { session: string }).session);
    // The lock is free: the same conversation goes through at once.
    await r.anthropic.messages.create({ ...ask, messages: hello });
    await r.close();
  });
});

describe('a passthrough call the client gives up on', () => {
  it('before the answer starts: the upstream call is cancelled', async () => {
    // Before, a request the proxy does not fold (the Responses API, files…) ran on upstream,
    // billed, until the upstream answered or --timeout, after the client had gone.
    let upstreamClosed = false;
    const r = await rig(
      (rec) => {
        rec.onClose?.(() => {
          upstreamClosed = true;
        });
        return { kind: 'hang' };
      },
      { timeoutMs: 60_000 },
    );
    await expect(
      fetch(`${r.proxy.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4.1', input: 'hello' }),
        signal: AbortSignal.timeout(300),
      }),
    ).rejects.toThrow();
    await waitUntil(() => upstreamClosed);
    expect(upstreamClosed).toBe(true);
    await waitUntil(() => r.logs.length > 0);
    expect(r.logs).toMatchObject([{ kind: 'passthrough', outcome: 'client_closed' }]);
    await r.close();
  });
});

describe('a store that refuses a write', () => {
  it('fails the call in the provider shape; the next call reopens the session from its log', async () => {
    const r = await rig(cannedReply());
    const turn = (i: number) => [
      {
        role: 'assistant' as const,
        content: [
          { type: 'tool_use' as const, id: `t${i}`, name: 'Bash', input: { command: `run ${i}` } },
        ],
      },
      {
        role: 'user' as const,
        content: [
          {
            type: 'tool_result' as const,
            tool_use_id: `t${i}`,
            content: `output ${i}\n`.repeat(200),
          },
        ],
      },
    ];
    const messages = [{ role: 'user' as const, content: 'Run everything.' }, ...turn(1)];
    const headers = { headers: { 'x-contextfold-session': 'orphan' } };
    await r.anthropic.messages.create({ ...ask, messages }, headers);
    // A cold node file with no index entry where the next fold writes (CONF-12): refused.
    const cold = join(sessionStoreDir(r.dir, 'orphan'), 'cold_nodes');
    mkdirSync(cold, { recursive: true });
    writeFileSync(join(cold, 'step_000001.json'), '{}');
    const longer = [...messages, ...turn(2), ...turn(3), ...turn(4), ...turn(5)];
    const e = await caught(r.anthropic.messages.create({ ...ask, messages: longer }, headers));
    expect(e.status).toBe(500);
    expect(e.message).toMatch(
      /could not build the prompt: step 1 has a cold node file but no index entry/,
    );
    expect(r.logs.at(-1)).toMatchObject({ kind: 'refused', status: 500 });
    await expectConsistent(r.dir, 'orphan');
    rmSync(join(cold, 'step_000001.json'));
    await r.anthropic.messages.create({ ...ask, messages: longer }, headers);
    expect(r.logs.at(-1)).toMatchObject({ kind: 'call', status: 200 });
    expect((r.logs.at(-1) as { folded: number[] }).folded).toContain(1);
    await expectConsistent(r.dir, 'orphan');
    await r.close();
  });
});
