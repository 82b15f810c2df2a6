import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { o200kTokenizer } from '../../extract/tokenizer.js';
import { replaySession } from '../../harness/replay.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { type RunningProxy, startProxy } from './server.js';
import { sessionStoreDir } from './session-pool.js';
import { cannedReply, type FakeUpstream, startFakeUpstream } from './test-utils/fake-upstream.js';

const BUDGET = 2000;
const tmp = tempDir('cf-proxy-live-');
const dir = join(tmp.dir, '.contextfold');
let up: FakeUpstream;
let proxy: RunningProxy;

beforeAll(async () => {
  up = await startFakeUpstream(cannedReply());
  proxy = await startProxy({ upstream: up.url, port: 0, dir, budget: BUDGET });
});
afterAll(async () => {
  await proxy.close();
  await up.close();
  tmp.cleanup();
});

/** A tool output about 3× the budget, with distinct first, middle and last lines. */
const output = [
  'HEAD-FIRST-LINE $ grep -rn TODO src',
  ...Array.from({ length: 900 }, (_, i) =>
    i === 450 ? 'MIDDLE-ONLY-IN-STORE:1: TODO' : `src/file_${i}.ts:${i}: // TODO tidy ${i}`,
  ),
  'TAIL-LAST-LINE 902 matches',
].join('\n');

const MARKER =
  /\[contextfold: \d+ tokens of this output left out of this call to fit the 2000-token budget; the whole output is kept in the session \(step \d+\)\]/;

function lastBody(): string {
  return up.requests.at(-1)!.body.toString('utf8');
}

describe('the proxy with a live tool output 3× the budget', () => {
  it('Anthropic: sends the tool_result as head and tail with the marker, paired with its call', async () => {
    expect(o200kTokenizer().count(output)).toBeGreaterThan(3 * BUDGET);
    const client = new Anthropic({ apiKey: 'sk-ant-x', baseURL: proxy.url, maxRetries: 0 });
    await client.messages.create(
      {
        model: 'm',
        max_tokens: 16,
        messages: [
          { role: 'user', content: 'Find the TODOs' },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'grep' } },
            ],
          },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: output }],
          },
        ],
      },
      { headers: { 'x-contextfold-session': 'big-a' } },
    );
    const body = JSON.parse(lastBody()) as {
      messages: {
        role: string;
        content: { type: string; id?: string; tool_use_id?: string; content?: string }[];
      }[];
    };
    const last = body.messages.at(-1)!;
    expect(last.content).toHaveLength(1);
    const result = last.content[0]!;
    expect(result).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1' });
    expect(body.messages.at(-2)!.content[0]).toMatchObject({ type: 'tool_use', id: 'toolu_1' });
    expect(result.content!.startsWith('HEAD-FIRST-LINE $ grep -rn TODO src\n')).toBe(true);
    expect(result.content!.endsWith('\nTAIL-LAST-LINE 902 matches')).toBe(true);
    expect(result.content).toMatch(MARKER);
    expect(lastBody()).not.toContain('MIDDLE-ONLY-IN-STORE');
    expect(o200kTokenizer().count(result.content!)).toBeLessThan(BUDGET);
    const replay = await replaySession({ dir: sessionStoreDir(dir, 'big-a') });
    expect(replay.matches).toBe(true);
    expect(replay.packs.at(-1)!.metadata.live_excerpts).toHaveLength(1);
    expect(replay.packs.at(-1)!.tokens).toBeLessThanOrEqual(BUDGET);
  }, 60_000);

  it('OpenAI: sends the tool message as head and tail with the marker, ids kept', async () => {
    const client = new OpenAI({
      apiKey: 'sk-x',
      baseURL: proxy.env.OPENAI_BASE_URL,
      maxRetries: 0,
    });
    await client.chat.completions.create(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'Find the TODOs' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'bash', arguments: '{"command":"grep"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: output },
        ],
      },
      { headers: { 'x-contextfold-session': 'big-o' } },
    );
    const body = JSON.parse(lastBody()) as {
      messages: { role: string; content: string; tool_call_id?: string }[];
    };
    const last = body.messages.at(-1)!;
    expect(last).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    expect(body.messages.at(-2)).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: 'call_1' }],
    });
    expect(last.content.startsWith('HEAD-FIRST-LINE')).toBe(true);
    expect(last.content.endsWith('TAIL-LAST-LINE 902 matches')).toBe(true);
    expect(last.content).toMatch(MARKER);
    expect(lastBody()).not.toContain('MIDDLE-ONLY-IN-STORE');
  }, 60_000);

  it('Anthropic: an oversized string prompt is sent as head and tail too', async () => {
    const prompt = `Summarise this:\n${output}\nEND-OF-PROMPT`;
    const client = new Anthropic({ apiKey: 'sk-ant-x', baseURL: proxy.url, maxRetries: 0 });
    await client.messages.create(
      { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: prompt }] },
      { headers: { 'x-contextfold-session': 'big-p' } },
    );
    const body = JSON.parse(lastBody()) as { messages: { role: string; content: string }[] };
    const sent = body.messages.at(-1)!.content;
    expect(typeof sent).toBe('string');
    expect(sent.startsWith('Summarise this:\n')).toBe(true);
    expect(sent.endsWith('END-OF-PROMPT')).toBe(true);
    expect(sent).toMatch(
      /tokens of this message left out of this call to fit the 2000-token budget/,
    );
    expect(o200kTokenizer().count(sent)).toBeLessThan(BUDGET);
  }, 60_000);
});
