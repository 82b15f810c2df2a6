import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { o200kTokenizer } from '../../extract/tokenizer.js';
import { FOLDED_STEPS_HEADER } from '../../harness/pack.js';
import { readHistoryRecords } from '../../import/turns-jsonl.js';
import { sha256Hex } from '../../protocol/canonical-json.js';
import { HAS_SHARED, sharedPath } from '../../test-utils/shared.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import type { ProxyLogLine } from './call-log.js';
import { anthropicRequests, openAiRequests } from './recorded-requests.js';
import { type RunningProxy, startProxy } from './server.js';
import { sessionStoreDir } from './session-pool.js';
import {
  ANTHROPIC_SSE,
  cannedReply,
  type FakeUpstream,
  OPENAI_SSE,
  type Recorded,
  startFakeUpstream,
} from './test-utils/fake-upstream.js';

// A real 303-turn Claude Code session (../shared is third-party data: read, never copied).
const FILE = sharedPath(
  'data',
  'trajectories',
  'marot_spotter_4d5611e5-241a-462a-8d15-5122611a9569.jsonl',
);
const RUN = HAS_SHARED || process.env.CI === 'true';
if (!RUN) console.warn('[proxy trajectory tests] ../shared is absent: skipped');

const BUDGET = 24_000;
/**
 * The step of the early turn the question is about: records 4–5 (the `bd show` call and its
 * output) are the third turn (0: the user's task, 1: records 1–3), and step ids count turns.
 */
const EARLY = 2;
const KEY = 'sk-ant-trajectory-Lm3Nq8Rv2Tx6Wz9Yb4';
const QUESTION =
  'What did the task spotter-dov.1 "Extract shared transcript presentation with AshComputer attachment" say, exactly?';

const tmp = tempDir('cf-proxy-traj-');
let up: FakeUpstream;
let proxy: RunningProxy;
const logs: ProxyLogLine[] = [];
const counter = o200kTokenizer();

beforeAll(async () => {
  if (!RUN) return;
  up = await startFakeUpstream(cannedReply());
  proxy = await startProxy({
    upstream: up.url,
    port: 0,
    dir: join(tmp.dir, '.contextfold'),
    budget: BUDGET,
    onLog: (l) => logs.push(l),
  });
});

afterAll(async () => {
  await proxy?.close();
  await up?.close();
  tmp.cleanup();
});

interface Block {
  step: number;
  hash: string;
  truncated: boolean;
  content: string;
}

/** The archived blocks in a text (as the pack formats them). */
function blocksIn(text: string): Block[] {
  const re =
    /<archived_record step_id="(\d+)" payload_sha256="([0-9a-f]{64})" chunk="1\/1" truncated="(true|false)">\n[^\n]*\n([\s\S]*?)\n<\/archived_record ([0-9a-f]{16})>/g;
  return [...text.matchAll(re)].map((m) => ({
    step: Number(m[1]),
    hash: m[2]!,
    truncated: m[3] === 'true',
    content: m[4]!,
  }));
}

/** Every text of a body (system and message texts), as the model reads it. */
function textsOf(body: Record<string, unknown>): string {
  const out: string[] = [];
  const visit = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      for (const k of [
        'text',
        'content',
        'arguments',
        'system',
        'messages',
        'tool_calls',
        'function',
      ])
        if (k in o) visit(o[k]);
      if ('input' in o) out.push(JSON.stringify(o.input));
    }
  };
  visit(body.system);
  visit(body.messages);
  return out.join('\n');
}

/** The cold node of a step in the session store the proxy wrote. */
function coldNode(session: string, step: number): { payload_sha256: string; raw_content: string } {
  const file = join(
    sessionStoreDir(join(tmp.dir, '.contextfold'), session),
    'cold_nodes',
    `step_${String(step).padStart(6, '0')}.json`,
  );
  expect(existsSync(file)).toBe(true);
  return JSON.parse(readFileSync(file, 'utf8')) as { payload_sha256: string; raw_content: string };
}

function lastCall(): Extract<ProxyLogLine, { kind: 'call' }> {
  const c = logs.filter((l) => l.kind === 'call').at(-1);
  if (c?.kind !== 'call') throw new Error('no call logged');
  return c;
}

describe.skipIf(!RUN)('a 300-turn real session through the proxy', () => {
  const records = RUN ? readHistoryRecords(FILE) : [];

  const check = (got: Recorded, session: string, raw: number) => {
    const body = got.json();
    const call = lastCall();
    // Under budget, by the pack's exact count and by an independent count of every text sent.
    expect(call.pack_tokens).toBeLessThanOrEqual(BUDGET);
    expect(call.history_tokens).toBeGreaterThan(150_000);
    expect(counter.count(textsOf(body))).toBeLessThanOrEqual(BUDGET);
    expect(got.body.length).toBeLessThan(raw / 10);
    // Folded-step records: one JSON line per folded turn.
    const text = textsOf(body);
    expect(text).toContain(FOLDED_STEPS_HEADER);
    expect(call.folded.length).toBeGreaterThan(100);
    // The early turn the question is about, paged in, verified against the store on disk.
    const pages = blocksIn(text);
    const page = pages.find((b) => b.step === EARLY);
    expect(page, `pages: ${pages.map((b) => b.step)}`).toBeDefined();
    const node = coldNode(session, EARLY);
    expect(node.payload_sha256).toBe(page!.hash);
    // The ranked page-in sends a window of whole lines (the lines that hold the prompt's keys)
    // or the whole turn: either way verbatim bytes of the verified payload.
    if (page!.truncated) expect(node.raw_content).toContain(page!.content);
    else expect(sha256Hex(page!.content)).toBe(page!.hash);
    // The tool output of that turn (the recorded row carries its label on line 1): its first
    // line, the task's title, is in the page.
    const output = records[5]!.content.split('\n')[1]!;
    expect(page!.content).toContain(output);
    expect(call.paged_in).toContain(EARLY);
    expect(call.evicted).toEqual(call.paged_in);
    return body;
  };

  it('Anthropic SDK: under budget, folded records, the verified early page; the next call has none', async () => {
    const client = new Anthropic({ apiKey: KEY, baseURL: proxy.url, maxRetries: 0 });
    const base = { model: 'claude-sonnet-4-5', max_tokens: 1024 };
    const calls = anthropicRequests(records, base);
    const last = calls.at(-1)!;
    const messages = [
      ...(last.body.messages as Anthropic.MessageParam[]),
      { role: 'user' as const, content: QUESTION },
    ];
    const raw = JSON.stringify({ ...base, messages }).length;
    const answer = await client.messages.create({ ...base, messages }).asResponse();
    expect(answer.status).toBe(200);
    const session = answer.headers.get('x-contextfold-session')!;
    expect(answer.headers.get('x-contextfold-paged-steps')?.split(',')).toContain(String(EARLY));
    expect(Number(answer.headers.get('x-contextfold-saved-tokens'))).toBeGreaterThan(100_000);
    check(up.requests.at(-1)!, session, raw);

    // The next call (streamed): the page of the previous call is gone (CONF-07).
    const next = [
      ...messages,
      { role: 'assistant' as const, content: 'Port 5433.' },
      { role: 'user' as const, content: 'Thanks. Commit and push the branch now.' },
    ];
    const streamed = await client.messages
      .create({ ...base, messages: next, stream: true })
      .asResponse();
    expect(await streamed.text()).toBe(ANTHROPIC_SSE.join(''));
    const second = textsOf(up.requests.at(-1)!.json());
    expect(blocksIn(second).map((b) => b.step)).not.toContain(EARLY);
    expect(lastCall().pack_tokens).toBeLessThanOrEqual(BUDGET);

    // count_tokens counts the folded prompt: what the upstream received, not the raw history.
    const count = await client.messages.countTokens({ model: base.model, messages: next });
    const counted = up.requests.at(-1)!;
    expect(counted.path).toBe('/v1/messages/count_tokens');
    expect(count.input_tokens).toBe(Math.ceil(counted.body.length / 4));
    expect(count.input_tokens).toBeLessThan(JSON.stringify(next).length / 4 / 10);
  }, 120_000);

  it('OpenAI SDK: the same through Chat Completions', async () => {
    const client = new OpenAI({
      apiKey: KEY,
      baseURL: proxy.env.OPENAI_BASE_URL,
      maxRetries: 0,
    });
    const calls = openAiRequests(records, { model: 'gpt-4.1' });
    const messages = [
      ...(calls.at(-1)!.body.messages as OpenAI.ChatCompletionMessageParam[]),
      { role: 'user' as const, content: QUESTION },
    ];
    const raw = JSON.stringify({ messages }).length;
    const answer = await client.chat.completions
      .create({ model: 'gpt-4.1', messages, stream: true })
      .asResponse();
    expect(await answer.text()).toBe(OPENAI_SSE.join(''));
    const session = answer.headers.get('x-contextfold-session')!;
    check(up.requests.at(-1)!, session, raw);
    await client.chat.completions.create({
      model: 'gpt-4.1',
      messages: [
        ...messages,
        { role: 'assistant', content: 'Port 5433.' },
        { role: 'user', content: 'Thanks. Commit and push the branch now.' },
      ],
    });
    expect(blocksIn(textsOf(up.requests.at(-1)!.json())).map((b) => b.step)).not.toContain(EARLY);
  }, 120_000);
});
