import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTurnsJsonl } from './turns-jsonl.js';

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
}

describe('parseTurnsJsonl', () => {
  it('reads one turn a line, content kept exactly (CRLF, non-ASCII, empty)', () => {
    const turns = parseTurnsJsonl(
      readFileSync(new URL('./fixtures/turns.jsonl', import.meta.url), 'utf8'),
      't',
    );
    expect(turns.map((t) => t.step_id)).toEqual([0, 1, 2, 3]);
    expect(turns[2]).toEqual({
      step_id: 2,
      role: 'tool',
      content: '[tool_result: Bash id=toolu_1]\n',
    });
    expect(turns[3]!.content).toBe('Port 5433 is set in config/database.yml.\r\nDone – ✓');
  });

  it('names the line and the problem', () => {
    expect(
      message(() => parseTurnsJsonl('{"step_id":0,"role":"user","content":"a"}\n{oops', 't.jsonl')),
    ).toMatch(/^t\.jsonl:2: not valid JSON/);
    expect(
      message(() => parseTurnsJsonl('{"step_id":-1,"role":"user","content":"a"}', 't.jsonl')),
    ).toBe('t.jsonl:1: "step_id" must be a non-negative integer, got -1');
    expect(
      message(() =>
        parseTurnsJsonl(
          '{"step_id":3,"role":"user","content":"a"}\n\n{"step_id":3,"role":"user","content":"b"}',
          't.jsonl',
        ),
      ),
    ).toBe(
      't.jsonl:3: "step_id" 3 does not follow 3; step ids are history positions and must increase',
    );
    expect(
      message(() => parseTurnsJsonl('{"step_id":0,"role":"bot","content":"a"}', 't.jsonl')),
    ).toMatch(/^t\.jsonl:1: "role" must be one of system, user, assistant, tool/);
    expect(
      message(() => parseTurnsJsonl('{"step_id":0,"role":"user","content":null}', 't.jsonl')),
    ).toBe('t.jsonl:1: "content" must be a string, got null');
  });
});
