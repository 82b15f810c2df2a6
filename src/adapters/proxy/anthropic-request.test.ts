import { afterAll, describe, expect, it } from 'vitest';
import type { ContextPack } from '../../harness/pack.js';
import { beginCall, endCall } from '../../harness/per-call.js';
import { Session } from '../../harness/session.js';
import { tempDir } from '../../test-utils/temp-dir.js';
import { type AnthropicBody, anthropicHistory } from './anthropic-history.js';
import { anthropicUpstream } from './anthropic-request.js';
import { FOLDED_START_NOTE, FOLDED_START_NOTE_NO_RECORDS } from './upstream-body.js';

const tmp = tempDir('cf-proxy-areq-');
afterAll(() => tmp.cleanup());
let n = 0;

type Block = Record<string, unknown>;

async function packOf(body: AnthropicBody, budget = 1500): Promise<ContextPack> {
  const session = await Session.open({
    dir: `${tmp.dir}/s${n++}`,
    budget,
    keepRecent: 1,
    pageInToolOutput: true,
  });
  const pack = await beginCall(session, anthropicHistory(body).messages);
  await endCall(session);
  await session.close();
  return pack;
}

/** A conversation of tool turns with long outputs (so they fold), then a live prompt. */
function long(turns: number, last: AnthropicBody['messages'][number]['content']): AnthropicBody {
  const messages: AnthropicBody['messages'] = [{ role: 'user', content: 'Check every module.' }];
  for (let i = 0; i < turns; i++) {
    const id = `toolu_${i}`;
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id, name: 'Bash', input: { command: `check m${i}` } }],
    });
    const out = Array.from(
      { length: 30 },
      (_, k) => `module m${i} line ${k}: ok token${i}x${k}`,
    ).join('\n');
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: out }],
    });
  }
  messages.push({ role: 'assistant', content: 'Done checking.' });
  messages.push({ role: 'user', content: last });
  return { model: 'm', max_tokens: 9, messages };
}

async function upstreamOf(body: AnthropicBody, budget = 1500) {
  const history = anthropicHistory(body);
  return anthropicUpstream(body, history, await packOf(body, budget));
}

describe('anthropicUpstream', () => {
  it('adds the records after a string system prompt, with a cache breakpoint', async () => {
    const body = { ...long(12, 'What did module m1 report?'), system: 'Be brief.' };
    const { body: out, unchanged } = await upstreamOf(body);
    expect(unchanged).toBe(false);
    const system = out.system as Block[];
    expect(system[0]).toEqual({ type: 'text', text: 'Be brief.' });
    expect(String(system[1]!.text)).toMatch(/^Folded steps:/);
    expect(system[1]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(system).toHaveLength(2);
  });

  it('uses a one-hour TTL when a later breakpoint of the client has one', async () => {
    const live = [
      {
        type: 'text' as const,
        text: 'What did module m1 report?',
        cache_control: { type: 'ephemeral' as const, ttl: '1h' as const },
      },
    ];
    const { body: out } = await upstreamOf(long(12, live));
    expect((out.system as Block[])[0]!.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
  });

  it('starts with a user message when the history it keeps starts with the assistant', async () => {
    const { body: out } = await upstreamOf(long(12, 'Thanks.'));
    const messages = out.messages as { role: string; content: unknown }[];
    expect(messages[0]).toEqual({ role: 'user', content: FOLDED_START_NOTE });
    expect(messages[1]!.role).toBe('assistant');
  });

  it('does not point to folded-step records the pack left out', async () => {
    // A budget so small that no record fits beside the live turn: the note said "see the
    // folded-step records in the system prompt" and there were none.
    const { body: out } = await upstreamOf(long(12, 'Thanks.'), 260);
    const messages = out.messages as { role: string; content: unknown }[];
    expect(JSON.stringify(out.system ?? '')).not.toContain('Folded steps');
    expect(messages[0]).toEqual({ role: 'user', content: FOLDED_START_NOTE_NO_RECORDS });
  });

  it('pages go at the end of a string prompt, as text', async () => {
    const { body: out } = await upstreamOf(long(12, 'What did module m1 report, token1x3?'));
    const last = (out.messages as { content: unknown }[]).at(-1)!;
    expect(typeof last.content).toBe('string');
    expect(String(last.content)).toMatch(
      /^What did module m1 report, token1x3\?\n\n<archived_record step_id="\d+"/,
    );
  });

  it('a compressed duplicate tool output keeps its tool_result block and id', async () => {
    const body = long(3, 'Go on.');
    // Two identical outputs in the recent turns: the older is replaced by a pointer.
    const same = 'identical build log\n'.repeat(40);
    body.messages.splice(
      body.messages.length - 2,
      0,
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'dup_a', name: 'Bash', input: { command: 'make' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'dup_a', content: same }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'dup_b', name: 'Bash', input: { command: 'make' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'dup_b', content: same }] },
    );
    const session = await Session.open({
      dir: `${tmp.dir}/s${n++}`,
      budget: 20_000,
      keepRecent: 8,
    });
    const pack = await beginCall(session, anthropicHistory(body).messages);
    await session.close();
    expect(pack.metadata.compressed.map((c) => c.strategy)).toContain('duplicate_tool_log');
    const { body: out } = anthropicUpstream(body, anthropicHistory(body), pack);
    const blocks = (out.messages as { content: unknown }[]).flatMap((m) =>
      Array.isArray(m.content) ? (m.content as Block[]) : [],
    );
    const b = blocks.filter(
      (x) => x.type === 'tool_result' && String(x.tool_use_id).startsWith('dup_'),
    );
    expect(b).toHaveLength(2);
    // The later copy points at the earlier one, which is kept whole.
    expect(String(b[0]!.content)).toBe(same);
    expect(String(b[1]!.content)).toMatch(
      /^\[duplicate tool output: identical to the result at step \d+\]$/,
    );
  });

  it('sends the client body itself when the pack changes nothing', async () => {
    const body: AnthropicBody = {
      model: 'm',
      max_tokens: 9,
      system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image', source: { type: 'url', url: 'https://x/y.png' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 't', signature: 's' },
            { type: 'text', text: 'yo' },
          ],
        },
        { role: 'user', content: 'bye' },
      ],
    };
    const r = await upstreamOf(body, 20_000);
    expect(r.unchanged).toBe(true);
    expect(r.body).toBe(body);
  });
});
