import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test-utils/temp-dir.js';
import type { ProxyLogLine } from './call-log.js';
import { type RunningProxy, startProxy } from './server.js';
import {
  ANTHROPIC_JSON,
  ANTHROPIC_SSE,
  cannedReply,
  type FakeUpstream,
  OPENAI_JSON,
  OPENAI_SSE,
  startFakeUpstream,
} from './test-utils/fake-upstream.js';

const KEY = 'sk-ant-test-Zq8v1xK3mN5pR7tW9yB2dF4hJ6';
const OPENAI_KEY = 'sk-proj-test-Hs2Lq9Vn4Xc7Tb1Mz5Kw8Pd3';

const tmp = tempDir('cf-proxy-');
let up: FakeUpstream;
let proxy: RunningProxy;
const logs: ProxyLogLine[] = [];

beforeAll(async () => {
  up = await startFakeUpstream(cannedReply());
  proxy = await startProxy({
    upstream: up.url,
    port: 0,
    dir: join(tmp.dir, '.contextfold'),
    budget: 4000,
    onLog: (l) => logs.push(l),
  });
});

afterAll(async () => {
  await proxy.close();
  await up.close();
  tmp.cleanup();
});

const anthropic = () => new Anthropic({ apiKey: KEY, baseURL: proxy.url, maxRetries: 0 });
const openai = () =>
  new OpenAI({ apiKey: OPENAI_KEY, baseURL: proxy.env.OPENAI_BASE_URL, maxRetries: 0 });

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map((f) => join(dir, String(f)))
    .filter((f) => statSync(f).isFile());
}

describe('startProxy with the official SDK clients', () => {
  it('listens on loopback and prints the base URLs to set', () => {
    expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(proxy.env).toEqual({
      ANTHROPIC_BASE_URL: proxy.url,
      OPENAI_BASE_URL: `${proxy.url}/v1`,
    });
  });

  it('Anthropic non-streaming: the answer reaches the client byte for byte, with the report headers', async () => {
    const res = await anthropic()
      .messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Which port does the database use?' }],
      })
      .asResponse();
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(ANTHROPIC_JSON);
    expect(res.headers.get('request-id')).toBe('req_fake_1');
    expect(res.headers.get('x-contextfold-session')).toMatch(/^auto-[0-9a-f]{24}$/);
    expect(Number(res.headers.get('x-contextfold-tokens-in'))).toBeGreaterThan(0);
    expect(res.headers.get('x-contextfold-saved-tokens')).toBe('0');
    expect(res.headers.get('x-contextfold-paged-steps')).toBe('');
    const got = up.requests.at(-1)!;
    expect(got.path).toBe('/v1/messages');
    expect(got.headers.authorization ?? got.headers['x-api-key']).toContain(KEY);
  });

  it('Anthropic streaming: the event stream arrives byte for byte and the SDK parses it', async () => {
    const client = anthropic();
    const params = {
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content: 'Stream me the port.' }],
    };
    const res = await client.messages.create({ ...params, stream: true }).asResponse();
    expect(await res.text()).toBe(ANTHROPIC_SSE.join(''));
    const final = await client.messages.stream(params).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Port 5433.' }]);
  });

  it('OpenAI non-streaming and streaming answers arrive byte for byte', async () => {
    const client = openai();
    const params = {
      model: 'gpt-4.1',
      messages: [
        { role: 'system' as const, content: 'Be brief.' },
        { role: 'user' as const, content: 'Which port?' },
      ],
    };
    const res = await client.chat.completions.create(params).asResponse();
    expect(await res.text()).toBe(OPENAI_JSON);
    expect(up.requests.at(-1)!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    const streamed = await client.chat.completions.create({ ...params, stream: true }).asResponse();
    expect(await streamed.text()).toBe(OPENAI_SSE.join(''));
    let text = '';
    for await (const c of await client.chat.completions.create({ ...params, stream: true })) {
      text += c.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('Port 5433.');
  });

  it('a conversation that fits is forwarded as the client sent it, byte for byte', async () => {
    const body =
      '{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"x_future":1.0}';
    const res = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body,
    });
    expect(res.status).toBe(200);
    expect(up.requests.at(-1)!.body.toString('utf8')).toBe(body);
  });

  it('an OpenAI conversation that fits, with a system message midway, is forwarded byte for byte', async () => {
    // Before, the pack's order (system messages first) was sent: the instruction moved to the
    // front and the cached prompt prefix changed, with nothing folded.
    const body = JSON.stringify({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'system', content: 'From now on, answer in French.' },
        { role: 'user', content: 'how are you?' },
      ],
    });
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body,
    });
    expect(res.status).toBe(200);
    expect(up.requests.at(-1)!.body.toString('utf8')).toBe(body);
  });

  it('count_tokens of a draft records nothing of it: the real call continues the same session', async () => {
    // Before, the draft was appended to the session, and the real call (another last message)
    // started a fork that folded the whole history again.
    const client = anthropic();
    const opening = [{ role: 'user' as const, content: `count opening ${Date.now()}` }];
    const first = await client.messages
      .create({ model: 'm', max_tokens: 5, messages: opening })
      .withResponse();
    const session = first.response.headers.get('x-contextfold-session')!;
    const history = [...opening, { role: 'assistant' as const, content: 'Port 5433.' }];
    const draft = { role: 'user' as const, content: 'a draft question about the pool size' };
    await client.messages.countTokens({ model: 'm', messages: [...history, draft] });
    const counted = up.requests.at(-1)!;
    expect(counted.path).toContain('/v1/messages/count_tokens');
    expect(JSON.stringify(counted.json().messages)).toContain(
      'a draft question about the pool size',
    );
    const real = await client.messages
      .create({
        model: 'm',
        max_tokens: 5,
        messages: [...history, { role: 'user', content: 'the real question' }],
      })
      .withResponse();
    expect(real.response.headers.get('x-contextfold-session')).toBe(session);
  });

  it("a changed system prompt (Anthropic `system`, OpenAI's first system message) goes on in the same session", async () => {
    // Before, the history differed at message 0: the call started a fork, which archived the
    // whole conversation again and left the session's own archive behind.
    const sessions = join(tmp.dir, '.contextfold', 'sessions');
    const events = (s: string) =>
      readFileSync(join(sessions, s, '.contextfold', 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; content?: string });
    const history = [
      { role: 'user' as const, content: 'Which port does the database use?' },
      { role: 'assistant' as const, content: 'Port 5433.' },
      { role: 'user' as const, content: 'And the pool size?' },
    ];
    const headers = { 'x-contextfold-session': 'sys-anthropic' };
    const client = anthropic();
    const first = { model: 'm', max_tokens: 5, system: 'Today is 2026-12-05.' };
    await client.messages.create({ ...first, messages: history.slice(0, 1) }, { headers });
    const res = await client.messages
      .create({ ...first, system: 'Today is 2026-12-06.', messages: history }, { headers })
      .asResponse();
    expect(res.headers.get('x-contextfold-session')).toBe('sys-anthropic');
    expect(up.requests.at(-1)!.json().system).toBe('Today is 2026-12-06.');
    expect(events('sys-anthropic').filter((e) => e.type === 'system_changed')).toMatchObject([
      { content: 'Today is 2026-12-06.' },
    ]);

    const oa = openai();
    const opts = { headers: { 'x-contextfold-session': 'sys-openai' } };
    const sys = (content: string) => ({ role: 'system' as const, content });
    await oa.chat.completions.create(
      { model: 'gpt-4o', messages: [sys('Today is 2026-12-05.'), ...history.slice(0, 1)] },
      opts,
    );
    const next = await oa.chat.completions
      .create({ model: 'gpt-4o', messages: [sys('Today is 2026-12-06.'), ...history] }, opts)
      .withResponse();
    expect(next.response.headers.get('x-contextfold-session')).toBe('sys-openai');
    expect((up.requests.at(-1)!.json().messages as unknown[])[0]).toEqual(
      sys('Today is 2026-12-06.'),
    );
    expect(events('sys-openai').filter((e) => e.type === 'system_changed')).toHaveLength(1);
    expect(readdirSync(sessions).filter((s) => s.startsWith('sys-'))).toEqual([
      'sys-anthropic',
      'sys-openai',
    ]);
  });

  it("Claude Code's /v1/messages?beta=true is folded too, and the query reaches the upstream", async () => {
    const before = logs.length;
    const res = await fetch(`${proxy.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({
        ...{ model: 'm', max_tokens: 5 },
        messages: [{ role: 'user', content: 'beta' }],
      }),
    });
    expect(await res.text()).toBe(ANTHROPIC_JSON);
    expect(up.requests.at(-1)!.path).toBe('/v1/messages?beta=true');
    expect(logs.slice(before)).toMatchObject([{ kind: 'call', endpoint: 'messages' }]);
  });

  it('other paths and methods pass through untouched, query included, without a session', async () => {
    const before = logs.length;
    const res = await fetch(`${proxy.url}/v1/models?limit=2`, { headers: { 'x-api-key': KEY } });
    expect(await res.json()).toEqual({ path: '/v1/models?limit=2', method: 'GET' });
    const put = await fetch(`${proxy.url}/v1/files/abc`, { method: 'PUT', body: 'raw\u0000bytes' });
    expect(put.status).toBe(200);
    expect(up.requests.at(-1)!.body.toString('latin1')).toBe('raw\u0000bytes');
    expect(logs.slice(before).map((l) => l.kind)).toEqual(['passthrough', 'passthrough']);
  });

  it('the session header names the session and is not forwarded', async () => {
    const res = await anthropic()
      .messages.create(
        {
          model: 'claude-sonnet-4-5',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'named' }],
        },
        { headers: { 'x-contextfold-session': 'chat-42' } },
      )
      .asResponse();
    expect(res.headers.get('x-contextfold-session')).toBe('chat-42');
    expect(up.requests.at(-1)!.headers['x-contextfold-session']).toBeUndefined();
    const bad = await fetch(`${proxy.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-contextfold-session': '../escape' },
      body: JSON.stringify({
        model: 'm',
        max_tokens: 1,
        messages: [{ role: 'user', content: 'x' }],
      }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { type: string } }).error.type).toBe(
      'invalid_request_error',
    );
  });

  it('never writes the API keys to the store or the log', () => {
    const texts = [
      ...filesUnder(join(tmp.dir, '.contextfold')).map((f) => readFileSync(f, 'latin1')),
      JSON.stringify(logs),
    ];
    expect(texts.length).toBeGreaterThan(5);
    for (const t of texts) {
      expect(t).not.toContain(KEY);
      expect(t).not.toContain(OPENAI_KEY);
      expect(t).not.toContain('Zq8v1xK3mN5pR7tW9yB2dF4hJ6');
    }
  });

  it('logs one line per call with the call decisions', () => {
    const calls = logs.filter((l) => l.kind === 'call');
    expect(calls.length).toBeGreaterThanOrEqual(7);
    for (const c of calls) {
      expect(c.status).toBe(200);
      expect(c.outcome).toBe('ok');
      expect(c.history_tokens).toBeGreaterThan(0);
      expect(c.evicted).toEqual(c.paged_in);
    }
  });
});

describe('startProxy options', () => {
  it('refuses an option it does not know (a misspelt budget was ignored: the default applied)', async () => {
    const dir = join(tempDir('cf-proxy-keys-').dir, 'store');
    await expect(
      startProxy({ upstream: 'http://127.0.0.1:9', port: 0, dir, budjet: 8000 } as never),
    ).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/^startProxy has no option 'budjet' \(options: upstream, /),
    });
    expect(existsSync(dir)).toBe(false);
  });
});

describe('startProxy({ cacheDir })', () => {
  it('keeps ranked analyses in each session store, whatever cacheDir says (nothing written there)', async () => {
    const t = tempDir('cf-proxy-cache-');
    const api = await startFakeUpstream(cannedReply());
    const cacheDir = join(t.dir, 'cache');
    const px = await startProxy({
      upstream: api.url,
      port: 0,
      dir: join(t.dir, 'store'),
      keepRecent: 0,
      foldThreshold: 16,
      tokenizer: 'reference',
      cacheDir,
    });
    try {
      const output = Array.from({ length: 40 }, (_, i) => `row ${i}: ledger_entry_${i} ok`);
      const res = await fetch(`${px.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-contextfold-session': 'cached' },
        body: JSON.stringify({
          model: 'm',
          max_tokens: 8,
          messages: [
            { role: 'user', content: 'list the ledger' },
            {
              role: 'assistant',
              content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: {} }],
            },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: 't1', content: output.join('\n') }],
            },
            { role: 'assistant', content: 'Listed.' },
            { role: 'user', content: 'thanks' },
          ],
        }),
      });
      expect(res.headers.get('x-contextfold-folded-steps')).not.toBe('');
    } finally {
      await px.close();
      await api.close();
    }
    // The option is deprecated: the analyses live in the store's derived index.
    expect(existsSync(cacheDir)).toBe(false);
    const stored = filesUnder(join(t.dir, 'store')).map((f) => f.slice(t.dir.length));
    expect(stored.filter((f) => /\/index-\d+-[0-9a-f]{8}\.sqlite$/.test(f))).toHaveLength(1);
    t.cleanup();
  });
});
