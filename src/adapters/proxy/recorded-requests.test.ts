import { describe, expect, it } from 'vitest';
import type { HistoryRecord } from '../../harness/messages.js';
import { type AnthropicBody, anthropicHistory } from './anthropic-history.js';
import { type OpenAiBody, openAiHistory } from './openai-history.js';
import { anthropicRequests, openAiRequests, splitAssistant } from './recorded-requests.js';

const CALL = '[tool_use: Bash id=t1]\n{\n "command": "ls"\n}';

describe('splitAssistant', () => {
  it('splits text and calls rendered the importers’ way, and only when it re-renders exactly', () => {
    expect(splitAssistant(`Look.\n${CALL}`)).toEqual([
      { kind: 'text', text: 'Look.' },
      { kind: 'call', name: 'Bash', id: 't1', input: '{\n "command": "ls"\n}' },
    ]);
    expect(splitAssistant(`${CALL}\n\nDone.`)).toEqual([
      { kind: 'call', name: 'Bash', id: 't1', input: '{\n "command": "ls"\n}' },
      { kind: 'text', text: '\nDone.' },
    ]);
    expect(splitAssistant('plain')).toEqual([{ kind: 'text', text: 'plain' }]);
    // Not valid JSON after the label: not a call.
    expect(splitAssistant('[tool_use: Bash id=t1]\n{ nope')).toBeNull();
  });
});

const records: HistoryRecord[] = [
  { step_id: 0, role: 'user', content: 'List and test.' },
  {
    step_id: 1,
    role: 'assistant',
    content: `Sure.\n${CALL}\n[tool_use: Bash id=t2]\n{\n "command": "npm test"\n}`,
  },
  { step_id: 2, role: 'tool', content: '[tool_result: Bash id=t1]\na.ts' },
  { step_id: 3, role: 'tool', content: '[tool_result: Bash id=t2 error]\n1 failed' },
  { step_id: 4, role: 'assistant', content: 'One test fails.' },
  { step_id: 5, role: 'tool', content: 'banner: unrelated output' },
  { step_id: 6, role: 'assistant', content: 'Noted.' },
];

describe('anthropicRequests / openAiRequests', () => {
  it('one request per model call; tool rows that answer calls become tool results', () => {
    const calls = anthropicRequests(records, { model: 'm', max_tokens: 5 });
    expect(calls.map((c) => c.at)).toEqual([1, 4, 6]);
    const last = calls.at(-1)!.body as unknown as AnthropicBody;
    expect(last.messages).toEqual([
      { role: 'user', content: 'List and test.' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Sure.' },
          { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } },
          { type: 'tool_use', id: 't2', name: 'Bash', input: { command: 'npm test' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'a.ts' },
          { type: 'tool_result', tool_use_id: 't2', content: '1 failed', is_error: true },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'One test fails.' }] },
      { role: 'user', content: 'banner: unrelated output' },
    ]);
    // What the proxy reads back: the rows, each tool result with its raw output.
    expect(anthropicHistory(last).messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'List and test.'],
      ['assistant', records[1]!.content],
      ['tool', 'a.ts'],
      ['tool', '1 failed'],
      ['assistant', 'One test fails.'],
      ['user', 'banner: unrelated output'],
    ]);
    const prefix = calls[0]!.body as unknown as AnthropicBody;
    expect(prefix.messages).toEqual([{ role: 'user', content: 'List and test.' }]);
  });

  it('Chat Completions: content then tool_calls, tool messages, no error flag', () => {
    const last = openAiRequests(records, { model: 'gpt' }).at(-1)!.body as unknown as OpenAiBody;
    expect(last.messages.slice(1, 4)).toEqual([
      {
        role: 'assistant',
        content: 'Sure.',
        tool_calls: [
          {
            id: 't1',
            type: 'function',
            function: { name: 'Bash', arguments: '{\n "command": "ls"\n}' },
          },
          {
            id: 't2',
            type: 'function',
            function: { name: 'Bash', arguments: '{\n "command": "npm test"\n}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 't1', content: 'a.ts' },
      { role: 'user', content: '[tool_result: Bash id=t2 error]\n1 failed' },
    ]);
    expect(openAiHistory(last).messages[1]!.content).toBe(records[1]!.content);
  });
});
