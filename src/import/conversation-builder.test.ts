import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HistoryMessage, Message } from '../harness/messages.js';
import { renderToolInput } from '../harness/turn-text.js';
import { groupTurns, turnPayload } from '../harness/turns.js';
import { type BuilderMessage, ConversationBuilder } from './conversation-builder.js';
import type { ImportedTurn } from './turn.js';

const user = (text: string): BuilderMessage => ({ role: 'user', parts: [{ kind: 'text', text }] });
const call = (id: string, name = 'Bash', groupKey?: string): BuilderMessage => ({
  role: 'assistant',
  parts: [{ kind: 'tool_use', id, name, input: `{"id":"${id}"}` }],
  ...(groupKey ? { groupKey } : {}),
});
const result = (id: string, content = `out ${id}`): BuilderMessage => ({
  role: 'user',
  parts: [{ kind: 'tool_result', toolUseId: id, content, isError: false }],
});

function run(messages: BuilderMessage[]): ImportedTurn[] {
  const b = new ConversationBuilder();
  const out = messages.flatMap((m) => b.push(m));
  return [...out, ...b.flush()].sort((a, c) => a.step_id - c.step_id);
}

describe('ConversationBuilder', () => {
  it('renders each call immediately followed by its result, in call order', () => {
    const turns = run([
      user('go'),
      { ...call('a'), parts: [...call('a').parts, ...call('b').parts] },
      result('b'),
      result('a'),
    ]);
    expect(turns).toEqual([
      { step_id: 0, role: 'user', content: 'go' },
      {
        step_id: 1,
        role: 'assistant',
        content:
          '[tool_use: Bash id=a]\n{"id":"a"}\n[tool_result: Bash id=a]\nout a\n[tool_use: Bash id=b]\n{"id":"b"}\n[tool_result: Bash id=b]\nout b',
      },
    ]);
  });

  it('merges consecutive assistant messages with the same group key into one turn', () => {
    const turns = run([
      user('go'),
      { role: 'assistant', parts: [{ kind: 'text', text: 'thinking' }], groupKey: 'm1' },
      call('a', 'Read', 'm1'),
      result('a'),
      call('b', 'Read', 'm1'),
      result('b'),
      { role: 'assistant', parts: [{ kind: 'text', text: 'done' }], groupKey: 'm2' },
    ]);
    expect(turns.map((t) => t.step_id)).toEqual([0, 1, 2]);
    expect(turns[1]!.content.split('\n').filter((l) => l.startsWith('['))).toEqual([
      '[tool_use: Read id=a]',
      '[tool_result: Read id=a]',
      '[tool_use: Read id=b]',
      '[tool_result: Read id=b]',
    ]);
    expect(turns[2]!.content).toBe('done');
  });

  it('keeps a result without a known call as its own tool turn, labelled with the id', () => {
    const turns = run([user('go'), result('ghost', 'late output'), user('next')]);
    expect(turns).toEqual([
      { step_id: 0, role: 'user', content: 'go' },
      { step_id: 1, role: 'tool', content: '[tool_result: id=ghost]\nlate output' },
      { step_id: 2, role: 'user', content: 'next' },
    ]);
  });

  it('marks errors in the result label', () => {
    const turns = run([
      call('x'),
      {
        role: 'user',
        parts: [{ kind: 'tool_result', toolUseId: 'x', content: 'boom', isError: true }],
      },
    ]);
    expect(turns[0]!.content).toContain('[tool_result: Bash id=x error]\nboom');
  });

  it('emits a turn only once it can no longer change', () => {
    const b = new ConversationBuilder();
    expect(b.push(user('go'))).toEqual([]);
    expect(b.push(call('a'))).toEqual([{ step_id: 0, role: 'user', content: 'go' }]);
    // The call is unanswered and last: not final.
    expect(b.push(user('interrupt'))).toEqual([
      { step_id: 1, role: 'assistant', content: '[tool_use: Bash id=a]\n{"id":"a"}' },
    ]);
    // The interrupted call's late result cannot change the emitted turn: it becomes a tool turn.
    expect(b.push(result('a'))).toEqual([{ step_id: 2, role: 'user', content: 'interrupt' }]);
    expect(b.flush()).toEqual([
      { step_id: 3, role: 'tool', content: '[tool_result: id=a]\nout a' },
    ]);
  });

  it("flush('complete') keeps turns with unanswered calls open", () => {
    const b = new ConversationBuilder();
    b.push(user('go'));
    expect(b.push(call('a')).map((t) => t.step_id)).toEqual([0]);
    expect(b.flush('complete')).toEqual([]);
    b.push(result('a'));
    expect(b.flush('complete').map((t) => t.step_id)).toEqual([1]);
  });

  it('gives the same turns whether fed in one pass or in chunks through persisted state', () => {
    const message = fc.oneof(
      fc.string({ maxLength: 6 }).map(user),
      fc
        .tuple(
          fc.constantFrom('a', 'b', 'c', 'd'),
          fc.option(fc.constantFrom('m1', 'm2'), { nil: undefined }),
        )
        .map(([id, g]) => call(id, 'T', g)),
      fc.constantFrom('a', 'b', 'c', 'd', 'zz').map((id) => result(id)),
      fc.constantFrom('m1', 'm2').map(
        (g): BuilderMessage => ({
          role: 'assistant',
          parts: [{ kind: 'text', text: g }],
          groupKey: g,
        }),
      ),
    );
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 25 }),
        fc.array(fc.boolean(), { maxLength: 25 }),
        (msgs, cuts) => {
          const expected = run(msgs);
          let b = new ConversationBuilder();
          const got: ImportedTurn[] = [];
          msgs.forEach((m, i) => {
            got.push(...b.push(m));
            if (cuts[i]) b = new ConversationBuilder(JSON.parse(JSON.stringify(b.state())));
          });
          got.push(...b.flush());
          got.sort((x, y) => x.step_id - y.step_id);
          expect(got).toEqual(expected);
          expect(expected.map((t) => t.step_id)).toEqual(expected.map((_, i) => i));
        },
      ),
    );
  });
});

describe('the same turn, imported or recorded by a Session (one rendering, issue 15)', () => {
  it('ConversationBuilder and turnPayload give the same step ids and the same bytes', () => {
    const input = { command: 'mix test', timeout: 60 };
    const built = run([
      user('run the tests'),
      {
        role: 'assistant',
        parts: [
          { kind: 'text', text: 'Running them.' },
          { kind: 'tool_use', id: 't1', name: 'Bash', input: renderToolInput(input) },
          { kind: 'tool_use', id: 't2', name: 'Read', input: renderToolInput({ path: 'a.ex' }) },
        ],
      },
      {
        role: 'user',
        parts: [
          { kind: 'tool_result', toolUseId: 't2', content: 'defmodule A', isError: false },
          { kind: 'tool_result', toolUseId: 't1', content: '1 failure', isError: true },
        ],
      },
      { role: 'assistant', parts: [{ kind: 'text', text: 'One test fails.' }] },
      {
        role: 'assistant',
        parts: [{ kind: 'tool_use', id: 't3', name: 'Bash', input: renderToolInput({}) }],
      },
    ]);
    const T = '2025-01-01T00:00:00Z';
    const messages: Message[] = [
      { role: 'user', content: 'run the tests' },
      {
        role: 'assistant',
        content: 'Running them.',
        toolCalls: [
          { id: 't1', name: 'Bash', input },
          { id: 't2', name: 'Read', input: { path: 'a.ex' } },
        ],
      },
      { role: 'tool', toolCallId: 't2', toolName: 'Read', content: 'defmodule A' },
      { role: 'tool', toolCallId: 't1', toolName: 'Bash', content: '1 failure', isError: true },
      { role: 'assistant', content: 'One test fails.' },
      // A call that never got its result (interrupted): rendered without one on both paths.
      { role: 'assistant', content: '', toolCalls: [{ id: 't3', name: 'Bash', input: {} }] },
    ];
    const turns = groupTurns(
      messages.map((m, i) => ({ ...m, stepId: i, timestamp: T }) as HistoryMessage),
    );
    expect(turns.map((t) => [t.stepId, turnPayload(t)])).toEqual(
      built.map((t) => [t.step_id, t.content]),
    );
  });
});
