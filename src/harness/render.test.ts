import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { o200kTokenizer } from '../extract/tokenizer.js';
import type { Message } from './messages.js';
import { renderMessage, renderMessages, stableJson } from './render.js';

describe('stableJson', () => {
  it('writes every key of parsed JSON, `__proto__` included', () => {
    // Before, the sorted copy assigned `__proto__` and the key vanished from the output (a tool
    // call's input rendered into the prompt, and the hashes over events and calls).
    const parsed: unknown = JSON.parse('{"b":2,"__proto__":{"x":1},"a":[{"__proto__":3}]}');
    expect(stableJson(parsed)).toBe('{"__proto__":{"x":1},"a":[{"__proto__":3}],"b":2}');
  });

  it('sorts keys by code point at every depth, whatever the insertion order', () => {
    expect(stableJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: 1.5 } })).toBe(
      '{"a":{"c":1.5,"d":[{"y":2,"z":1}]},"b":1}',
    );
    expect(stableJson({ '\u{1F600}': 1, '\uFF01': 2 })).toBe('{"\uFF01":2,"\u{1F600}":1}');
    expect(stableJson(undefined)).toBe('null');
  });
});

describe('renderMessage', () => {
  it('writes a header line, the body with tool calls, and a blank line', () => {
    expect(renderMessage({ role: 'user', content: 'hi' })).toBe('[user]\nhi\n\n');
    expect(
      renderMessage({
        role: 'assistant',
        content: 'running',
        toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'ls', cwd: '/' } }],
      }),
    ).toBe('[assistant]\nrunning\n[tool_call bash id=c1]\n{"command":"ls","cwd":"/"}\n\n');
    expect(
      renderMessage({
        role: 'tool',
        content: 'boom',
        toolName: 'bash',
        toolCallId: 'c1',
        exitCode: 1,
        isError: true,
      }),
    ).toBe('[tool_result bash id=c1 exit=1 error]\nboom\n\n');
  });

  it('renders so that o200k token counts add up exactly across messages', () => {
    const tok = o200kTokenizer();
    const text = fc.string({ unit: 'binary', maxLength: 60 });
    const message = fc.oneof(
      fc.record({ role: fc.constant('user' as const), content: text }),
      fc.record({ role: fc.constant('system' as const), content: text }),
      fc.record({
        role: fc.constant('tool' as const),
        content: text,
        toolName: fc.constant('bash'),
      }),
    );
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), (msgs: Message[]) => {
        const whole = tok.count(renderMessages(msgs));
        const parts = msgs.reduce((a, m) => a + tok.count(renderMessage(m)), 0);
        expect(whole).toBe(parts);
      }),
      { numRuns: 300 },
    );
  });
});
