import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FOLDED_STEPS_HEADER } from '../../harness/pack.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { MAX_CACHE_BREAKPOINTS } from './anthropic-request.js';
import type { ProxyLogLine } from './call-log.js';
import { type RunningProxy, startProxy } from './server.js';
import {
  ANTHROPIC_SSE,
  cannedReply,
  type FakeUpstream,
  startFakeUpstream,
} from './test-utils/fake-upstream.js';
import { FOLDED_START_NOTE, FOLDED_START_NOTE_NO_RECORDS } from './upstream-body.js';

type Body = Record<string, unknown> & { messages: Msg[]; system: Block[]; tools: Block[] };
type Msg = { role: string; content: string | Block[] };
type Block = Record<string, unknown>;

/** Claude Code's request shape, written from the Messages API documentation. */
const FIXTURE = readFileSync(
  new URL('./fixtures/claude-code-request.json', import.meta.url),
  'utf8',
);
const fixture = (): Body => JSON.parse(FIXTURE) as Body;
const BETA = 'claude-code-20250219,interleaved-thinking-2025-05-14';

const tmp = tempDir('cf-proxy-cc-');
let up: FakeUpstream;
const logs: ProxyLogLine[] = [];

beforeAll(async () => {
  up = await startFakeUpstream(cannedReply());
});
afterAll(async () => {
  await up.close();
  tmp.cleanup();
});

async function withProxy<T>(budget: number, fn: (p: RunningProxy) => Promise<T>): Promise<T> {
  const proxy = await startProxy({
    upstream: up.url,
    port: 0,
    dir: join(tmp.dir, `b${budget}`),
    budget,
    keepRecent: 2,
    onLog: (l) => logs.push(l),
  });
  try {
    return await fn(proxy);
  } finally {
    await proxy.close();
  }
}

/** A long tool loop in the same shape, inserted after the first prompt so that old turns fold. */
function longSession(turns: number): Body {
  const body = fixture();
  const loop: Msg[] = [];
  for (let i = 0; i < turns; i++) {
    const id = `toolu_01Loop${String(i).padStart(4, '0')}xyz`;
    loop.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `Step ${i}: check module ${i}.`, signature: `Sig${i}AAAA==` },
        { type: 'text', text: `Checking module m${i}.` },
        { type: 'tool_use', id, name: 'Bash', input: { command: `npm run check -- m${i}` } },
      ],
    });
    const lines = Array.from(
      { length: 60 },
      (_, k) => `m${i}/file${k}.ts: ok (checked ${k * 7} symbols, marker${i}x${k})`,
    );
    loop.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: lines.join('\n') }],
    });
  }
  body.messages = [body.messages[0]!, ...loop, ...body.messages.slice(1)];
  return body;
}

/** `sent` is `original`, or some of its blocks in their order, each unchanged. */
function within(sent: Msg, original: Msg): boolean {
  if (sent.role !== original.role) return false;
  if (typeof original.content === 'string') return sent.content === original.content;
  if (!Array.isArray(sent.content)) return false;
  let k = 0;
  for (const b of original.content) {
    if (k < sent.content.length && JSON.stringify(sent.content[k]) === JSON.stringify(b)) k++;
  }
  return k === sent.content.length;
}

function breakpoints(body: Body): number {
  let n = 0;
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      const o = v as Block;
      if (o.cache_control) n++;
      if (Array.isArray(o.content)) visit(o.content);
    }
  };
  visit([body.tools, body.system, body.messages]);
  return n;
}

/** Every tool_use is answered in the very next message, every tool_result answers the one before. */
function expectPairsIntact(messages: Msg[]): void {
  const blocks = (m: Msg | undefined) => (Array.isArray(m?.content) ? m.content : []);
  messages.forEach((m, i) => {
    const uses = blocks(m)
      .filter((b) => b.type === 'tool_use')
      .map((b) => b.id);
    const results = blocks(messages[i + 1])
      .filter((b) => b.type === 'tool_result')
      .map((b) => b.tool_use_id);
    if (m.role === 'assistant') expect(results).toEqual(uses);
    const answered = blocks(m)
      .filter((b) => b.type === 'tool_result')
      .map((b) => b.tool_use_id);
    if (answered.length > 0) {
      const prev = blocks(messages[i - 1])
        .filter((b) => b.type === 'tool_use')
        .map((b) => b.id);
      expect(answered).toEqual(prev);
    }
  });
}

describe("Claude Code's request shape through the proxy", () => {
  it('round-trips with nothing lost when nothing needs folding: the same bytes arrive', async () => {
    await withProxy(200_000, async (proxy) => {
      const res = await fetch(`${proxy.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'sk-ant-cc-1',
          'anthropic-beta': BETA,
          'anthropic-version': '2023-06-01',
        },
        body: FIXTURE,
      });
      expect(await res.text()).toBe(ANTHROPIC_SSE.join(''));
      const got = up.requests.at(-1)!;
      expect(got.body.toString('utf8')).toBe(FIXTURE);
      expect(got.headers['anthropic-beta']).toBe(BETA);
      expect(got.headers['anthropic-version']).toBe('2023-06-01');

      // The official SDK serialises it again: every field still arrives as it was.
      const client = new Anthropic({ apiKey: 'sk-ant-cc-1', baseURL: proxy.url, maxRetries: 0 });
      const stream = await client.messages.create(fixture() as never, {
        headers: { 'anthropic-beta': BETA },
      });
      for await (const _ of stream as unknown as AsyncIterable<unknown>) {
        // drain
      }
      expect(up.requests.at(-1)!.json()).toEqual(fixture());
    });
  });

  it('folds a long session: kept messages, tools, thinking, metadata and unknown fields arrive untouched', async () => {
    await withProxy(3000, async (proxy) => {
      const body = longSession(40);
      // A field the proxy does not know, with numbers JSON.stringify cannot give back: a
      // rebuilt body used to say 12345678901234567000, null and 0.
      const exotic = '"x_numbers":{"seed":12345678901234567890,"big":1e400,"neg":-0}';
      const res = await fetch(`${proxy.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-beta': BETA },
        body: `{${exotic},${JSON.stringify(body).slice(1)}`,
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(ANTHROPIC_SSE.join(''));
      const call = logs.at(-1)!;
      expect(call.kind).toBe('call');
      if (call.kind !== 'call') return;
      expect(call.folded.length).toBeGreaterThan(20);
      expect(call.pack_tokens).toBeLessThanOrEqual(3000);

      expect(up.requests.at(-1)!.body.toString('utf8').startsWith(`{${exotic},`)).toBe(true);
      const sent = up.requests.at(-1)!.json() as Body;
      const original = longSession(40);
      for (const k of [
        'model',
        'max_tokens',
        'tools',
        'metadata',
        'thinking',
        'temperature',
        'stream',
        'x_future_option',
      ]) {
        expect(sent[k], k).toEqual(original[k]);
      }
      // The client's system blocks first (cache_control kept), then the folded-step records.
      expect(sent.system.slice(0, 2)).toEqual(original.system);
      expect(sent.system).toHaveLength(3);
      expect(String(sent.system[2]!.text).startsWith(FOLDED_STEPS_HEADER)).toBe(true);
      // The request already had the maximum of breakpoints: none is added.
      expect(breakpoints(original)).toBe(MAX_CACHE_BREAKPOINTS);
      expect(sent.system[2]!.cache_control).toBeUndefined();
      expect(breakpoints(sent)).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);

      // Every message sent is one of the client's, in the client's order, with its blocks
      // untouched (a message whose tool results were folded keeps its other blocks).
      // This call's pages are one extra text block at the end of the live message.
      const live = sent.messages.at(-1)!;
      const pages = (live.content as Block[]).filter((b) =>
        String(b.text ?? '').startsWith('<archived_record '),
      );
      expect(pages.length).toBeLessThanOrEqual(1);
      expect(live.content.at(-1)).toBe(pages[0] ?? live.content.at(-1));
      live.content = (live.content as Block[]).filter((b) => !pages.includes(b));
      let from = 0;
      for (const m of sent.messages) {
        if (m.content === FOLDED_START_NOTE || m.content === FOLDED_START_NOTE_NO_RECORDS) continue;
        const at = original.messages.findIndex((o, i) => i >= from && within(m, o));
        expect(at, JSON.stringify(m).slice(0, 200)).toBeGreaterThanOrEqual(from);
        from = at + 1;
      }
      expect(sent.messages.length).toBeLessThan(original.messages.length);
      // The live turn is whole: the edit with its signed thinking block, the image, the prompt.
      expect(sent.messages.slice(-2)).toEqual(original.messages.slice(-2));
      expect(sent.messages[0]!.role).toBe('user');
      expectPairsIntact(sent.messages);
    });
  });

  it('marks the folded prefix for prompt caching when the client left room', async () => {
    await withProxy(3000, async (proxy) => {
      const body = longSession(40);
      delete body.tools[2]!.cache_control;
      await (
        await fetch(`${proxy.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).text();
      const first = up.requests.at(-1)!.json() as Body;
      expect(first.system[2]!.cache_control).toEqual({ type: 'ephemeral' });
      expect(breakpoints(first)).toBe(MAX_CACHE_BREAKPOINTS);

      // The next call of the same conversation: the prefix up to the records is the same bytes,
      // so the provider's cache keeps hitting.
      const next = longSession(40);
      delete next.tools[2]!.cache_control;
      next.messages.push(
        { role: 'assistant', content: [{ type: 'text', text: 'All 42 tests pass.' }] },
        { role: 'user', content: 'Thanks, that is all.' },
      );
      await (
        await fetch(`${proxy.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(next),
        })
      ).text();
      const second = up.requests.at(-1)!.json() as Body;
      const prefix = (b: Body) => JSON.stringify([b.tools, b.system]);
      expect(prefix(second)).toBe(prefix(first));
    });
  });
});
