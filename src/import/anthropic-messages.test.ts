import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAnthropicMessages } from './anthropic-messages.js';

const text = readFileSync(new URL('./fixtures/anthropic-messages.json', import.meta.url), 'utf8');

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('parseAnthropicMessages', () => {
  const turns = parseAnthropicMessages(text, 'body.json');

  it('attaches tool_result blocks to their tool_use and keeps trailing text as a user turn', () => {
    expect(turns.map((t) => [t.step_id, t.role])).toEqual([
      [0, 'user'],
      [1, 'assistant'],
      [2, 'user'],
      [3, 'assistant'],
    ]);
    expect(turns[1]!.content).toBe(
      [
        '[thinking]',
        'Run mix ecto.migrate first.',
        'Running the migrations.',
        '[tool_use: bash id=toolu_01A09q90qw90lq917835lq9]',
        '{\n "command": "mix ecto.migrate"\n}',
        '[tool_result: bash id=toolu_01A09q90qw90lq917835lq9 error]',
        '** (Postgrex.Error) ERROR 42P07 (duplicate_table) relation "invoices" already exists',
      ].join('\n'),
    );
    expect(turns[2]!.content).toBe('Why did that happen?');
  });

  it('does not import the top-level system prompt as a turn', () => {
    expect(turns.some((t) => t.content.includes('You are a coding agent'))).toBe(false);
  });

  it('keeps server tool blocks and unknown blocks instead of dropping them', () => {
    const doc = JSON.stringify([
      {
        role: 'assistant',
        content: [
          {
            type: 'server_tool_use',
            id: 'srvtoolu_1',
            name: 'web_search',
            input: { query: 'ecto port' },
          },
          {
            type: 'web_search_tool_result',
            tool_use_id: 'srvtoolu_1',
            content: [{ type: 'web_search_result', url: 'https://hexdocs.pm/ecto', title: 'Ecto' }],
          },
          { type: 'container_upload', file_id: 'f1' },
        ],
      },
    ]);
    const [t] = parseAnthropicMessages(doc, 'a.json');
    expect(t!.content).toContain('[tool_use: web_search id=srvtoolu_1]');
    expect(t!.content).toContain('[tool_result: web_search id=srvtoolu_1]');
    expect(t!.content).toContain('https://hexdocs.pm/ecto');
    expect(t!.content).toContain('[container_upload]');
  });

  it('names the line of a bad message', () => {
    const bad = text.replace('"name": "bash",', '');
    expect(bad).not.toBe(text);
    // The line where message 1 (the assistant message) starts: its opening brace.
    const lines = bad.split('\n');
    let line = lines.findIndex((l) => l.includes('"role": "assistant"'));
    while (line >= 0 && !lines[line]!.trim().startsWith('{')) line--;
    line += 1;
    expect(line).toBeGreaterThan(1);
    expect(message(() => parseAnthropicMessages(bad, 'body.json'))).toBe(
      `body.json:${line}: message 1: content block 2 (tool_use) has no string "name"`,
    );
    expect(
      message(() => parseAnthropicMessages('[{"role":"system","content":"x"}]', 'a.json')),
    ).toBe('a.json:1: message 0: "role" must be "user" or "assistant", got "system"');
  });
});
