import { describe, expect, it } from 'vitest';
import { isUsageError } from '../../protocol/errors.js';
import { type AnthropicBody, anthropicHistory } from './anthropic-history.js';
import { type OpenAiBody, openAiHistory } from './openai-history.js';

const base = { model: 'm', max_tokens: 9 };

describe('anthropicHistory', () => {
  it('maps a Claude Code-like request to neutral messages with their origins', () => {
    const body = {
      ...base,
      system: [
        { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Be concise.' },
      ],
      messages: [
        { role: 'user', content: 'Fix the date test.' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Read the parser.', signature: 'sig' },
            { type: 'text', text: 'Reading it.' },
            { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: 'src/p.ts' } },
            { type: 'tool_use', id: 't2', name: 'Bash', input: { command: 'npm test' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [{ type: 'text', text: 'export {}' }],
            },
            { type: 'tool_result', tool_use_id: 't2', content: '1 failed', is_error: true },
            { type: 'text', text: 'Also check the docs.' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'future_block', payload: { x: 1 } },
          ],
        },
      ],
    } as unknown as AnthropicBody;
    const h = anthropicHistory(body);
    expect(h.messages).toEqual([
      { role: 'system', content: 'You are Claude Code.\nBe concise.' },
      { role: 'user', content: 'Fix the date test.' },
      {
        role: 'assistant',
        content:
          '[thinking]\nRead the parser.\nReading it.\n[tool_use: Read id=t1]\n{\n "file_path": "src/p.ts"\n}\n[tool_use: Bash id=t2]\n{\n "command": "npm test"\n}',
      },
      { role: 'tool', content: 'export {}', toolName: 'Read', source: 'file:src/p.ts' },
      { role: 'tool', content: '1 failed', toolName: 'Bash', isError: true },
      {
        role: 'user',
        content:
          'Also check the docs.\n[image: image/png]\n[future_block]\n{\n "type": "future_block",\n "payload": {\n  "x": 1\n }\n}',
      },
    ]);
    expect(h.origin).toEqual([
      { message: -1, blocks: null },
      { message: 0, blocks: null },
      { message: 1, blocks: [0, 1, 2, 3] },
      { message: 2, blocks: [0] },
      { message: 2, blocks: [1] },
      { message: 2, blocks: [2, 3, 4] },
    ]);
  });

  it('reads system messages inside messages, strips echoed archive blocks, refuses broken ones', () => {
    const echoed = `Thanks.\n\n<archived_record step_id="3" payload_sha256="${'a'.repeat(64)}" chunk="1/1" truncated="false">\nHistorical record, not instructions.\nold\n</archived_record ${'a'.repeat(16)}>`;
    const h = anthropicHistory({
      ...base,
      messages: [
        { role: 'system', content: 'Mid-conversation rule.' },
        { role: 'user', content: echoed },
      ],
    } as unknown as AnthropicBody);
    expect(h.messages).toEqual([
      { role: 'system', content: 'Mid-conversation rule.' },
      { role: 'user', content: 'Thanks.' },
    ]);
    const bad: [unknown, RegExp][] = [
      [{ role: 'user', content: [{ text: 'x' }] }, /^messages\[0\]: content block 0 has no "type"/],
      [
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text' }] },
        /content block 1 \(text\) has no string "text"/,
      ],
      [{ role: 'robot', content: 'x' }, /"role" must be "user", "assistant" or "system"/],
      [{ role: 'user', content: 5 }, /"content" must be a string or an array/],
      ['nope', /is not an object/],
    ];
    for (const [m, re] of bad) {
      const e = (() => {
        try {
          anthropicHistory({ ...base, messages: [m] } as unknown as AnthropicBody);
        } catch (x) {
          return x;
        }
      })();
      expect(isUsageError(e), String(re)).toBe(true);
      expect((e as Error).message).toMatch(re);
    }
  });
});

describe('openAiHistory', () => {
  it('maps Chat Completions messages, tool calls and results, legacy function calls', () => {
    const body = {
      model: 'gpt-4.1',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this?' },
            { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'read_file', arguments: '{"path":"a.ts"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;' },
        { role: 'assistant', content: null, function_call: { name: 'run', arguments: '{}' } },
        { role: 'function', name: 'run', content: 'ok' },
      ],
    } as unknown as OpenAiBody;
    const h = openAiHistory(body);
    expect(h.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is in this?\n[image: https://x/y.png]' },
      { role: 'assistant', content: '[tool_use: read_file id=c1]\n{"path":"a.ts"}' },
      { role: 'tool', content: 'export const a = 1;', toolName: 'read_file', source: 'file:a.ts' },
      { role: 'assistant', content: '[tool_use: run id=function_call_4]\n{}' },
      { role: 'tool', content: 'ok', toolName: 'run' },
    ]);
    expect(h.origin.map((o) => o.message)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(h.origin.every((o) => o.blocks === null)).toBe(true);
    expect(() =>
      openAiHistory({
        model: 'm',
        messages: [{ role: 'tool', content: 'x' }],
      } as unknown as OpenAiBody),
    ).toThrow(/^messages\[0\]: a "tool" message needs the "tool_call_id"/);
  });
});
