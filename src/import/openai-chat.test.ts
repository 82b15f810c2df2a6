import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseOpenAiMessages } from './openai-chat.js';

const text = readFileSync(new URL('./fixtures/openai-chat.json', import.meta.url), 'utf8');

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('parseOpenAiMessages', () => {
  const turns = parseOpenAiMessages(text, 'chat.json');

  it('makes one turn per message, tool messages joined to the call they answer', () => {
    expect(turns.map((t) => [t.step_id, t.role])).toEqual([
      [0, 'system'],
      [1, 'user'],
      [2, 'assistant'],
      [3, 'assistant'],
      [4, 'user'],
      [5, 'assistant'],
    ]);
    expect(turns[2]!.content).toBe(
      [
        '[tool_use: read_file id=call_read_config]',
        '{"path":"config/database.yml"}',
        '[tool_result: read_file id=call_read_config]',
        'development:\n  adapter: postgresql\n  port: 5433',
        '[tool_use: run_shell id=call_psql]',
        `{"command":"psql -p 5433 -c 'show port'"}`,
        '[tool_result: run_shell id=call_psql]',
        ' port\n------\n 5433\n(1 row)',
      ].join('\n'),
    );
  });

  it('renders content parts and refusals without dropping them', () => {
    expect(turns[4]!.content).toBe('And this screenshot of the error?\n[image]');
    expect(turns[5]!.content).toBe('\n[refusal]\nI cannot read that image.');
  });

  it('accepts a request body with a "messages" array', () => {
    const body = JSON.stringify({ model: 'gpt-4.1', messages: JSON.parse(text) });
    expect(parseOpenAiMessages(body, 'req.json')).toEqual(turns);
  });

  it('joins a legacy function_call with the function message that answers it', () => {
    const legacy = JSON.stringify([
      { role: 'assistant', content: null, function_call: { name: 'get_port', arguments: '{}' } },
      { role: 'function', name: 'get_port', content: '5433' },
    ]);
    expect(parseOpenAiMessages(legacy, 'l.json')).toEqual([
      {
        step_id: 0,
        role: 'assistant',
        content:
          '[tool_use: get_port id=function_call_0]\n{}\n[tool_result: get_port id=function_call_0]\n5433',
      },
    ]);
  });

  it('names the line of a structurally bad message', () => {
    const bad = text.replace('"tool_call_id": "call_psql", ', '');
    expect(bad).not.toBe(text);
    const line = bad.split('\n').findIndex((l) => l.includes('5433\\n(1 row)')) + 1;
    expect(message(() => parseOpenAiMessages(bad, 'chat.json'))).toBe(
      `chat.json:${line}: message 3: a "tool" message needs the "tool_call_id" of the call it answers`,
    );
    expect(
      message(() => parseOpenAiMessages('[\n{"role":"robot","content":"x"}\n]', 'c.json')),
    ).toMatch(/^c\.json:2: message 0: unknown "role" "robot"/);
    expect(
      message(() =>
        parseOpenAiMessages(
          '{"messages":[{"role":"assistant","tool_calls":[{"type":"function"}]}]}',
          'c.json',
        ),
      ),
    ).toBe('c.json:1: message 0: tool_calls[0] has no string "id"');
  });

  it('names the line of a JSON syntax error and rejects other document shapes', () => {
    expect(message(() => parseOpenAiMessages('[\n{"role":"user",\n]', 'c.json'))).toMatch(
      /^c\.json:3: not valid JSON/,
    );
    expect(message(() => parseOpenAiMessages('{"model":"x"}', 'c.json'))).toMatch(
      /^c\.json: expected an OpenAI Chat Completions history/,
    );
  });
});
