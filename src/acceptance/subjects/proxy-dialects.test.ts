import { describe, expect, it } from 'vitest';
import type { HistoryTurn } from '../case-schema.js';
import { bodyText, DIALECTS } from './proxy-dialects.js';

const HISTORY: HistoryTurn[] = [
  { user: 'check the ledger' },
  {
    tool: { name: 'Bash', input: { command: 'ledger --all' }, output: 'ok\r\n42', is_error: true },
    assistant: 'It failed.',
  },
  { user: 'again', tool: { name: 'Read', input: { path: 'a.txt' }, output: 'x' } },
];

describe('the proxy subject’s clients', () => {
  it('Anthropic: each tool call is a tool_use answered by the next message’s tool_result', () => {
    const m = DIALECTS.anthropic.history(HISTORY);
    expect(m).toEqual([
      { role: 'user', content: 'check the ledger' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'Bash', input: { command: 'ledger --all' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'ok\r\n42', is_error: true },
        ],
      },
      { role: 'assistant', content: 'It failed.' },
      { role: 'user', content: 'again' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'call_2', name: 'Read', input: { path: 'a.txt' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_2', content: 'x' }] },
    ]);
    const answer = { content: [{ type: 'text', text: 'Noted.' }] };
    expect(DIALECTS.anthropic.reply(answer)).toEqual({ role: 'assistant', ...answer });
  });

  it('OpenAI: each tool call is on the assistant message, its result a tool message with its id', () => {
    const m = DIALECTS.openai.history(HISTORY);
    expect(m.slice(1, 3)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'Bash', arguments: '{"command":"ledger --all"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'ok\r\n42' },
    ]);
    expect(m).toHaveLength(7);
    const answer = { choices: [{ message: { role: 'assistant', content: 'Noted.' } }] };
    expect(DIALECTS.openai.reply(answer)).toEqual({ role: 'assistant', content: 'Noted.' });
  });
});

describe('bodyText: the text a request body puts before the model', () => {
  it('is every string of the body, in order, with its bytes unescaped', () => {
    const body = {
      model: 'm',
      system: [{ type: 'text', text: 'sys' }],
      messages: [{ role: 'user', content: 'Grüße\r\n\u0000 "q" \\ 東京' }],
      metadata: { user_id: 'hidden-field' },
      max_tokens: 5,
    };
    expect(bodyText(Buffer.from(JSON.stringify(body), 'utf8'))).toBe(
      ['m', 'text', 'sys', 'user', 'Grüße\r\n\u0000 "q" \\ 東京', 'hidden-field'].join('\n'),
    );
  });
});
