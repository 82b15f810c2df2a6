import { describe, expect, it } from 'vitest';
import { isUsageError } from '../protocol/errors.js';
import type { HistoryMessage, Message } from './messages.js';
import { groupTurns, turnPayload, unansweredCalls } from './turns.js';

const T = '2025-01-01T00:00:00Z';
const h = (msgs: Message[]): HistoryMessage[] =>
  msgs.map((m, i) => ({ ...m, stepId: i, timestamp: T }) as HistoryMessage);

describe('groupTurns', () => {
  const history = (): HistoryMessage[] =>
    h([
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'run it' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'a', name: 'bash', input: {} },
          { id: 'b', name: 'bash', input: {} },
        ],
      },
      { role: 'tool', toolCallId: 'a', content: '1' },
      { role: 'tool', toolCallId: 'b', content: '2' },
      { role: 'assistant', content: 'done' },
      { role: 'tool', content: 'untagged log' },
      { role: 'user', content: 'next' },
    ]);

  it('keeps an assistant message and its tool results together; step id = turn count', () => {
    expect(groupTurns(history()).map((t) => [t.stepId, t.kind, t.steps])).toEqual([
      [0, 'system', [0]],
      [1, 'user', [1]],
      [2, 'assistant', [2, 3, 4]],
      [3, 'assistant', [5, 6]],
      [4, 'user', [7]],
    ]);
  });

  it("numbers by the first message's position under the 'positions' rule (older sessions)", () => {
    expect(groupTurns(history(), 'positions').map((t) => [t.stepId, t.steps])).toEqual([
      [0, [0]],
      [1, [1]],
      [2, [2, 3, 4]],
      [5, [5, 6]],
      [7, [7]],
    ]);
  });

  it('gives tool output with no assistant before it a turn of its own', () => {
    const turns = groupTurns(
      h([
        { role: 'tool', content: 'banner' },
        { role: 'tool', content: 'more' },
        { role: 'user', content: 'hi' },
      ]),
    );
    expect(turns.map((t) => t.steps)).toEqual([[0, 1], [2]]);
  });

  it('refuses a result for a call the preceding assistant did not make, or a second result', () => {
    const bad: Message[][] = [
      [
        { role: 'user', content: 'x' },
        { role: 'tool', toolCallId: 'a', content: 'r' },
      ],
      [
        { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'bash', input: {} }] },
        { role: 'tool', toolCallId: 'b', content: 'r' },
      ],
      [
        { role: 'assistant', content: '', toolCalls: [{ id: 'a', name: 'bash', input: {} }] },
        { role: 'tool', toolCallId: 'a', content: 'r' },
        { role: 'tool', toolCallId: 'a', content: 'again' },
      ],
    ];
    for (const msgs of bad) {
      let err: unknown;
      try {
        groupTurns(h(msgs));
      } catch (e) {
        err = e;
      }
      expect(isUsageError(err)).toBe(true);
      expect((err as Error).message).toMatch(/^message \d+: tool/);
    }
  });

  it('lists calls that never got a result', () => {
    const [t] = groupTurns(
      h([
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'a', name: 'x', input: {} },
            { id: 'b', name: 'y', input: {} },
          ],
        },
        { role: 'tool', toolCallId: 'a', content: 'r' },
      ]),
    );
    expect(unansweredCalls(t!)).toEqual(['b']);
  });
});

describe('turnPayload', () => {
  it('is the exact content of a plain single message (CRLF, trailing spaces and all)', () => {
    const [t] = groupTurns(h([{ role: 'user', content: 'a\r\nb  \n' }]));
    expect(turnPayload(t!)).toBe('a\r\nb  \n');
  });

  const callTurn = () =>
    groupTurns(
      h([
        {
          role: 'assistant',
          content: 'go',
          toolCalls: [
            { id: 'a', name: 'bash', input: { command: 'ls', cwd: '/' } },
            { id: 'b', name: 'read', input: { path: 'x.ts' } },
          ],
        },
        { role: 'tool', toolCallId: 'b', toolName: 'read', isError: true, content: 'no such file' },
        { role: 'tool', toolCallId: 'a', toolName: 'bash', exitCode: 0, content: 'x.ts' },
        { role: 'tool', content: 'untagged log' },
      ]),
    )[0]!;

  it('renders a turn as the importers do: each call followed by its result, parts joined by a newline', () => {
    expect(turnPayload(callTurn())).toBe(
      [
        'go',
        '[tool_use: bash id=a]\n{\n "command": "ls",\n "cwd": "/"\n}',
        '[tool_result: bash id=a exit=0]\nx.ts',
        '[tool_use: read id=b]\n{\n "path": "x.ts"\n}',
        '[tool_result: read id=b error]\nno such file',
        '[tool_result]\nuntagged log',
      ].join('\n'),
    );
  });

  it("renders the messages as the model saw them under the 'positions' rule (older sessions)", () => {
    const [t] = groupTurns(
      h([
        {
          role: 'assistant',
          content: 'go',
          toolCalls: [{ id: 'a', name: 'bash', input: { command: 'ls' } }],
        },
        { role: 'tool', toolCallId: 'a', toolName: 'bash', exitCode: 0, content: 'x.ts' },
      ]),
      'positions',
    );
    expect(turnPayload(t!, 'positions')).toBe(
      '[assistant]\ngo\n[tool_call bash id=a]\n{"command":"ls"}\n\n[tool_result bash id=a exit=0]\nx.ts\n\n',
    );
  });
});
