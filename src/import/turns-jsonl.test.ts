import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isUsageError } from '../protocol/errors.js';
import { tempDir } from '../test-utils/temp-dir.js';
import {
  historyRecordRow,
  parseTurnsJsonl,
  readHistoryRecords,
  readTurnsJsonl,
  type StepIdRule,
} from './turns-jsonl.js';

function failure(fn: () => unknown): { message: string; line: unknown } {
  try {
    fn();
  } catch (e) {
    expect(isUsageError(e)).toBe(true);
    return {
      message: (e as Error).message,
      line: (e as { details?: { line?: number } }).details?.line,
    };
  }
  throw new Error('expected an error');
}

const row = (id: number, content = 'x') => JSON.stringify({ step_id: id, role: 'user', content });
const lines = (...ids: number[]) => ids.map((i) => row(i)).join('\n');

describe('parseTurnsJsonl', () => {
  it('reads one turn a line, content kept exactly (CRLF, non-ASCII, empty)', () => {
    const turns = parseTurnsJsonl(
      readFileSync(new URL('./fixtures/turns.jsonl', import.meta.url), 'utf8'),
      { source: 't' },
    );
    expect(turns.map((t) => t.step_id)).toEqual([0, 1, 2, 3]);
    expect(turns[2]).toEqual({
      step_id: 2,
      role: 'tool',
      content: '[tool_result: Bash id=toolu_1]\n',
    });
    expect(turns[3]!.content).toBe('Port 5433 is set in config/database.yml.\r\nDone – ✓');
  });

  it('drops the CR of a CRLF line ending and skips blank lines', () => {
    const text = `${row(0, 'a')}\r\n\r\n\n${row(1, 'b\r')}\r\n`;
    expect(parseTurnsJsonl(text, { source: 't', stepIds: 'positional' })).toEqual([
      { step_id: 0, role: 'user', content: 'a' },
      { step_id: 1, role: 'user', content: 'b\r' },
    ]);
  });

  // Each rule: what it accepts, and the first id it refuses (with the line of that row).
  const rules: [StepIdRule, number[], number[], number, RegExp][] = [
    ['positional', [0, 1, 2], [1, 2], 1, /"step_id" 1 is out of order: expected 0/],
    ['consecutive', [4, 5, 6], [4, 6], 2, /"step_id" 6 is out of order: expected 5/],
    ['increasing', [0, 3, 9], [3, 3], 2, /"step_id" 3 does not follow 3/],
    ['any', [5, 1, 1, 0], [], 0, /never/],
  ];
  for (const [rule, ok, bad, line, re] of rules) {
    it(`step id rule '${rule}': accepts ${ok.join(',')}${bad.length ? `, refuses ${bad.join(',')}` : ''}`, () => {
      expect(
        parseTurnsJsonl(lines(...ok), { source: 't.jsonl', stepIds: rule }).map((t) => t.step_id),
      ).toEqual(ok);
      if (bad.length === 0) return;
      const f = failure(() => parseTurnsJsonl(lines(...bad), { source: 't.jsonl', stepIds: rule }));
      expect(f.message).toMatch(new RegExp(`^t\\.jsonl:${line}: ${re.source}`));
      expect(f.line).toBe(line);
    });
  }

  it('the default rule is increasing (gaps allowed, repeats refused)', () => {
    expect(parseTurnsJsonl(lines(2, 7), { source: 't' }).map((t) => t.step_id)).toEqual([2, 7]);
    expect(failure(() => parseTurnsJsonl(lines(2, 1), { source: 't' })).message).toMatch(
      /^t:2: "step_id" 1 does not follow 2/,
    );
  });

  it('bad input is one UsageError naming the file line', () => {
    const cases: [string, string | RegExp, number][] = [
      [`${row(0)}\n{oops`, /^t\.jsonl:2: not valid JSON \(/, 2],
      ['[1]', 't.jsonl:1: expected a JSON object {"step_id","role","content"}', 1],
      [
        '{"step_id":-1,"role":"user","content":"a"}',
        't.jsonl:1: "step_id" must be a non-negative integer, got -1',
        1,
      ],
      [
        '{"step_id":1.5,"role":"user","content":"a"}',
        't.jsonl:1: "step_id" must be a non-negative integer, got 1.5',
        1,
      ],
      [
        `${row(0)}\n\n{"step_id":1,"role":"bot","content":"a"}`,
        /^t\.jsonl:3: "role" must be one of system, user, assistant, tool/,
        3,
      ],
      [
        '{"step_id":0,"role":"user","content":null}',
        't.jsonl:1: "content" must be a string, got null',
        1,
      ],
    ];
    for (const [text, expected, line] of cases) {
      const f = failure(() => parseTurnsJsonl(text, { source: 't.jsonl' }));
      if (typeof expected === 'string') expect(f.message).toBe(expected);
      else expect(f.message).toMatch(expected);
      expect(f.message.split('\n')).toHaveLength(1);
      expect(f.line).toBe(line);
    }
  });

  it('an empty file is a history of no turns, unless turns are required', () => {
    expect(parseTurnsJsonl('\n\n', { source: 't' })).toEqual([]);
    expect(failure(() => parseTurnsJsonl('\n', { source: 't', requireTurns: true })).message).toBe(
      't: no turns (the file is empty)',
    );
  });

  it('parseRow builds each result (history records keep their tool fields)', () => {
    const text = [
      JSON.stringify({
        step_id: 0,
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c', name: 'ls', input: {} }],
      }),
      JSON.stringify({ step_id: 1, role: 'tool', content: 'a', tool_call_id: 'c', exit_code: 0 }),
    ].join('\n');
    const records = parseTurnsJsonl(text, {
      source: 'h',
      stepIds: 'consecutive',
      parseRow: historyRecordRow,
    });
    expect(records[1]).toEqual({
      step_id: 1,
      role: 'tool',
      content: 'a',
      tool_call_id: 'c',
      exit_code: 0,
    });
    expect(
      failure(() =>
        parseTurnsJsonl('{"step_id":0,"role":"tool","content":"a","exit_code":"x"}', {
          source: 'h',
          parseRow: historyRecordRow,
        }),
      ).message,
    ).toMatch(/^h:1: expected \{step_id, role, content\}: exit_code/);
  });
});

describe('readTurnsJsonl / readHistoryRecords', () => {
  it('read a file (a missing one is one line naming it)', () => {
    const dir = tempDir().dir;
    {
      const f = join(dir, 'run.jsonl');
      writeFileSync(f, lines(3, 4));
      expect(readTurnsJsonl(f, { stepIds: 'consecutive' }).map((t) => t.step_id)).toEqual([3, 4]);
      expect(readHistoryRecords(f).map((r) => r.step_id)).toEqual([3, 4]);
      expect(failure(() => readTurnsJsonl(join(dir, 'nope.jsonl'))).message).toBe(
        `${join(dir, 'nope.jsonl')}: no such file`,
      );
    }
  });

  it('a tool result answering no call of the message before it names its file line', () => {
    const f = join(tempDir().dir, 'turns.jsonl');
    const row = (o: object) => `${JSON.stringify(o)}\n`;
    const tool = { step_id: 3, role: 'tool', content: 'x', tool_call_id: 'zz' };
    writeFileSync(
      f,
      row({ step_id: 0, role: 'user', content: 'hi' }) +
        row({ step_id: 1, role: 'assistant', content: 'ok' }) +
        '\n' +
        row({ step_id: 2, role: 'user', content: 'again' }) +
        row(tool),
    );
    expect(failure(() => readHistoryRecords(f)).message).toBe(
      `${f}:5: tool result answers call id 'zz', but the assistant message right before it made no such call`,
    );
    // A file continuing a session may open with results of a call the session already holds.
    writeFileSync(
      f,
      row({ ...tool, step_id: 7 }) + row({ step_id: 8, role: 'user', content: 'go' }),
    );
    expect(readHistoryRecords(f).map((r) => r.step_id)).toEqual([7, 8]);
  });
});
