import { describe, expect, it } from 'vitest';
import type { Message } from './messages.js';
import { redactMessages } from './redact-message.js';

const call = (input: unknown): Message => ({
  role: 'assistant',
  content: 'calling',
  toolCalls: [{ id: 'c1', name: 'http', input }],
});

describe('redactMessages', () => {
  it('keeps a `__proto__` key of a tool call input as data', async () => {
    // Before, the rebuilt input assigned `__proto__`: the key was dropped and its value became the
    // copy's prototype.
    const input = JSON.parse('{"__proto__":{"p":"v"},"q":"w"}') as Record<string, unknown>;
    const out = await redactMessages([call(input)], async (t) => [...t]);
    const copy = (out[0] as { toolCalls: { input: object }[] }).toolCalls[0]!.input;
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"p":"v"},"q":"w"}');
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  it('redacts a string under an identifier key after its key, and hands back only the value', async () => {
    const seen: string[] = [];
    const out = await redactMessages(
      [call({ headers: { Authorization: 'Bearer abc' }, 'not a key!': 'v', list: ['a'] })],
      async (t) => {
        seen.push(...t);
        return t.map((x) => x.replace('Bearer abc', 'Bearer [REDACTED:authorization-header]'));
      },
    );
    expect(seen).toEqual(['calling', 'Authorization: Bearer abc', 'v', 'a']);
    expect(out[0]).toMatchObject({
      toolCalls: [
        {
          input: {
            headers: { Authorization: 'Bearer [REDACTED:authorization-header]' },
            'not a key!': 'v',
            list: ['a'],
          },
        },
      ],
    });
  });

  it('redacts the value on its own when a match reached into its key', async () => {
    const out = await redactMessages([call({ secret_abc: 'value' })], async (t) =>
      t.map((x) => x.replace(/^secret_abc: /, '[REDACTED:x]').replace(/^value$/, 'alone')),
    );
    expect(out[0]).toMatchObject({ toolCalls: [{ input: { secret_abc: 'alone' } }] });
  });
});
