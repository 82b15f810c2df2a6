import { describe, expect, it } from 'vitest';
import { o200kTokenizer } from '../extract/tokenizer.js';
import { compressRecent, sourceOf } from './compress.js';
import type { HistoryMessage, Message } from './messages.js';
import { TokenMeter } from './token-meter.js';
import { groupTurns } from './turns.js';

const T = '2025-01-01T00:00:00Z';
const turnsOf = (msgs: Message[]) =>
  groupTurns(msgs.map((m, i) => ({ ...m, stepId: i, timestamp: T }) as HistoryMessage));
const meter = new TokenMeter(o200kTokenizer());
const LOG = Array.from({ length: 40 }, (_, i) => `compiled chunk ${i}: ok`).join('\n');

const call = (
  id: string,
  name: string,
  input: unknown,
  result: string,
  extra: Partial<Message> = {},
): Message[] => [
  { role: 'assistant', content: '', toolCalls: [{ id, name, input }] },
  { role: 'tool', toolCallId: id, toolName: name, content: result, ...extra } as Message,
];

describe('compressRecent', () => {
  it('replaces a repeated tool log by a pointer to the first copy, keeping the pair together', () => {
    const turns = turnsOf([
      ...call('a', 'bash', { command: 'build' }, LOG),
      ...call('b', 'bash', { command: 'build' }, LOG),
    ]);
    const { turns: out, notes } = compressRecent(turns, null, meter);
    expect(out[0]!.messages[1]!.content).toBe(LOG);
    const second = out[1]!.messages[1]!;
    expect(second).toMatchObject({
      role: 'tool',
      toolCallId: 'b',
      content: '[duplicate tool output: identical to the result at step 1]',
    });
    expect(notes).toEqual([
      {
        strategy: 'duplicate_tool_log',
        layer: 'L1',
        step_id: 3,
        kept_step_id: 1,
        reason: 'identical to an earlier tool output in the pack',
      },
    ]);
    expect(out[1]!.tokens[1]).toBeLessThan(
      meter.message({ role: 'tool', toolCallId: 'b', toolName: 'bash', content: LOG }),
    );
  });

  it('keeps only the latest output per source (explicit, or derived from a read call)', () => {
    const turns = turnsOf([
      ...call('a', 'read_file', { path: 'src/a.ts' }, `v1\n${LOG}`),
      ...call('b', 'bash', { command: 'x' }, `v1 log\n${LOG}x`, { source: 'log:app' }),
      ...call('c', 'read_file', { path: 'src/a.ts' }, `v2\n${LOG}`),
    ]);
    expect(sourceOf(turns[0]!, turns[0]!.messages[1] as never)).toBe('file:src/a.ts');
    const current = turnsOf([
      { role: 'user', content: 'x' },
      ...call('d', 'tail', {}, 'new log', { source: 'log:app' }),
    ]).map((t) => ({
      ...t,
      stepId: t.stepId + 10,
      steps: t.steps.map((s) => s + 10),
      messages: t.messages.map((m) => ({ ...m, stepId: m.stepId + 10 })),
    }))[1]!;
    const { turns: out, notes } = compressRecent(turns, current, meter);
    expect(out[0]!.messages[1]!.content).toBe(
      '[superseded: a newer output of file:src/a.ts is at step 5]',
    );
    expect(out[1]!.messages[1]!.content).toBe(
      '[superseded: a newer output of log:app is at step 12]',
    );
    expect(out[2]!.messages[1]!.content).toBe(`v2\n${LOG}`);
    expect(notes.map((n) => [n.strategy, n.step_id, n.kept_step_id, n.source])).toEqual([
      ['latest_artifact_per_source', 1, 5, 'file:src/a.ts'],
      ['latest_artifact_per_source', 3, 12, 'log:app'],
    ]);
  });

  it('never replaces an output by a marker that is not shorter', () => {
    const turns = turnsOf([...call('a', 'bash', {}, 'ok'), ...call('b', 'bash', {}, 'ok')]);
    const { turns: out, notes } = compressRecent(turns, null, meter);
    expect(out[1]!.messages[1]!.content).toBe('ok');
    expect(notes).toEqual([]);
  });
});
