import { describe, expect, it } from 'vitest';
import { parseCodexRollout } from './codex-rollout.js';

/** A rollout as Codex CLI writes it (record layout of codex-rs `RolloutLine`). */
const lines = [
  {
    type: 'session_meta',
    payload: { id: '019a2d7a-41c4', cwd: '/home/me/billing', cli_version: '0.77.0' },
  },
  { type: 'turn_context', payload: { model: 'gpt-5.1-codex-max', effort: 'high' } },
  {
    type: 'response_item',
    payload: {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Run the billing tests.' }],
    },
  },
  { type: 'event_msg', payload: { type: 'user_message', message: 'Run the billing tests.' } },
  {
    type: 'response_item',
    payload: {
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: '**Running the tests**' }],
      encrypted_content: 'gAAAA…',
    },
  },
  {
    type: 'response_item',
    payload: {
      type: 'function_call',
      name: 'shell',
      arguments: '{"command":["pytest","-q","billing"]}',
      call_id: 'call_1',
    },
  },
  {
    type: 'response_item',
    payload: {
      type: 'function_call_output',
      call_id: 'call_1',
      output: '{"output":"1 failed, 11 passed","metadata":{"exit_code":1}}',
    },
  },
  { type: 'response_item', payload: { type: 'ghost_snapshot', ghost_commit: { id: 'dac0' } } },
  {
    type: 'response_item',
    payload: {
      type: 'message',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'One failure: the VAT rate for AT.' }],
    },
  },
  { type: 'compacted', payload: { message: 'Fixed the VAT rate; tests green.' } },
].map((r) => JSON.stringify({ timestamp: '2025-12-08T00:39:54.852Z', ...r }));

describe('parseCodexRollout', () => {
  const { turns, sessionId } = parseCodexRollout(`${lines.join('\n')}\n`, 'rollout.jsonl');

  it('takes the session id from session_meta and skips context and UI events', () => {
    expect(sessionId).toBe('019a2d7a-41c4');
    expect(turns.map((t) => [t.step_id, t.role])).toEqual([
      [0, 'user'],
      [1, 'assistant'],
      [2, 'assistant'],
      [3, 'user'],
    ]);
    expect(turns[0]!.content).toBe('Run the billing tests.');
  });

  it("makes one turn of a model response, with each call's output attached", () => {
    expect(turns[1]!.content).toBe(
      [
        '[thinking]',
        '**Running the tests**',
        '[tool_use: shell id=call_1]',
        '{"command":["pytest","-q","billing"]}',
        '[tool_result: shell id=call_1]',
        '{"output":"1 failed, 11 passed","metadata":{"exit_code":1}}',
      ].join('\n'),
    );
    // The output ended that response: the answer after it is the next turn.
    expect(turns[2]!.content).toBe('One failure: the VAT rate for AT.');
    expect(turns[3]!.content).toBe('[compact summary]\nFixed the VAT rate; tests green.');
  });

  it('reads the first rollouts, whose items were written bare', () => {
    const bare = [
      { id: 's0', timestamp: '2025-04-20T10:00:00Z', instructions: null },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] },
    ].map((r) => JSON.stringify(r));
    const r = parseCodexRollout(bare.join('\n'), 'old.jsonl');
    expect(r.turns.map((t) => t.content)).toEqual(['hi', 'hello']);
    expect(r.sessionId).toBe('s0');
  });

  it('refuses a malformed record in one line naming the file and line', () => {
    const bad = [lines[0], '{"type": "response_item", "payload": {"type": "function_call"}}'];
    expect(() => parseCodexRollout(bad.join('\n'), 'r.jsonl')).toThrow(
      /^r\.jsonl:2: a tool call without "call_id"$/,
    );
    expect(() => parseCodexRollout('{"type": ', 'r.jsonl')).toThrow(/^r\.jsonl:1: not valid JSON/);
  });
});
