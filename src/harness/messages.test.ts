import { describe, expect, it } from 'vitest';
import { isUsageError } from '../protocol/errors.js';
import {
  type HistoryMessage,
  messageToRecord,
  parseHistoryRecord,
  parseMessage,
  recordToMessage,
} from './messages.js';

describe('parseMessage', () => {
  it('accepts the four roles and keeps their fields', () => {
    expect(parseMessage({ role: 'system', content: 's' }, 'm')).toEqual({
      role: 'system',
      content: 's',
    });
    const a = parseMessage(
      {
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'ls' } }],
      },
      'm',
    );
    expect(a).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'ls' } }],
    });
    const t = parseMessage(
      { role: 'tool', content: 'x', toolCallId: 'c1', exitCode: 2, isError: true },
      'm',
    );
    expect(t).toEqual({ role: 'tool', content: 'x', toolCallId: 'c1', exitCode: 2, isError: true });
  });

  it('refuses bad input with one line naming where and what', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const cases: [unknown, RegExp][] = [
      [{ role: 'robot', content: 'x' }, /^message 3: invalid message: role/],
      [{ role: 'user' }, /^message 3: invalid message: content/],
      [{ role: 'tool', content: 'x', exitCode: 1.5 }, /exitCode/],
      [
        { role: 'user', content: 'x', timestamp: 'yesterday' },
        /timestamp: must be an RFC 3339 date-time/,
      ],
      // The shape of a date-time with fields out of range (the folded-step schema refuses it).
      ...['2025-13-45T99:99:99Z', '2025-02-29T00:00:00Z', '2025-01-01T00:00:00+24:00'].map(
        (timestamp): [unknown, RegExp] => [
          { role: 'user', content: 'x', timestamp },
          /timestamp: must be an RFC 3339 date-time/,
        ],
      ),
      [
        { role: 'assistant', content: '', toolCalls: [{ name: 'bash', input: {} }] },
        /toolCalls\.0\.id/,
      ],
      // Tool inputs the log could not give back (a session recording one could not be reopened).
      ...[undefined, cyclic, { n: 10n }].map((input): [unknown, RegExp] => [
        { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'list', input }] },
        /toolCalls\.0\.input: must be a JSON value/,
      ]),
    ];
    for (const [value, re] of cases) {
      let err: unknown;
      try {
        parseMessage(value, 'message 3');
      } catch (e) {
        err = e;
      }
      expect(isUsageError(err)).toBe(true);
      expect((err as Error).message).toMatch(re);
      expect((err as Error).message).not.toContain('\n');
    }
  });
});

describe('history records', () => {
  it('round-trip every field through the snake_case line form', () => {
    const msgs: HistoryMessage[] = [
      { role: 'user', content: 'hi', stepId: 0, timestamp: '2025-01-01T00:00:00Z' },
      {
        role: 'assistant',
        content: 'ok',
        toolCalls: [{ id: 'c', name: 'read_file', input: { path: 'a.ts', n: 1.5 } }],
        stepId: 1,
        timestamp: '2025-01-01T00:00:01Z',
      },
      {
        role: 'tool',
        content: 'body',
        toolCallId: 'c',
        toolName: 'read_file',
        exitCode: 0,
        isError: false,
        source: 'file:a.ts',
        stepId: 2,
        timestamp: '2025-01-01T00:00:02Z',
      },
    ];
    for (const m of msgs) {
      const r = messageToRecord(m);
      expect(r.step_id).toBe(m.stepId);
      const back = parseHistoryRecord(JSON.parse(JSON.stringify(r)), 'line');
      const { stepId: _s, ...plain } = m;
      expect(recordToMessage(back)).toEqual(plain);
    }
  });

  it('accepts the ../shared/data turns format and names the line on errors', () => {
    expect(parseHistoryRecord({ step_id: 4, role: 'tool', content: 'x' }, 'line 5')).toEqual({
      step_id: 4,
      role: 'tool',
      content: 'x',
    });
    expect(() => parseHistoryRecord({ step_id: -1, role: 'user', content: 'x' }, 'line 5')).toThrow(
      /^line 5: expected \{step_id, role, content\}: step_id/,
    );
    expect(() => parseHistoryRecord({ step_id: 1, role: 'user' }, 'line 9')).toThrow(
      /^line 9: .*content/,
    );
  });
});
