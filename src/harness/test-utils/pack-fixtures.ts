// Fixtures the pack property tests share: folded-step records, random turn shapes and the
// history messages they stand for, and a page of a text.
import fc from 'fast-check';
import { sha256Hex } from '../../protocol/canonical-json.js';
import type { FoldedStep } from '../../protocol/types.js';
import type { HistoryMessage, Message } from '../messages.js';
import type { PackPage } from '../pack.js';
import { groupTurns, type Turn } from '../turns.js';

/** The timestamp of every fixture message and record. */
export const T = '2025-01-01T00:00:00Z';

/** A folded-step record whose summary grows with `words`. */
export const foldedRecord = (step: number, words: number): FoldedStep => ({
  step_id: step,
  timestamp: T,
  summary: `user: turn ${step} ${'about billing '.repeat(words)}`.trim(),
  status: 'SUCCESS',
  action_type: 'OTHER',
  artifacts: {
    cold_node_ref: `.contextfold/cold_nodes/step_${String(step).padStart(6, '0')}.json`,
  },
});

/** A turn's shape: a user message, or an assistant call and its result. */
export type TurnShape =
  | { kind: 'user'; text: string }
  | { kind: 'call'; text: string; output: string };

/** Random {@link TurnShape}s over texts from `text`. */
export function turnShapes(text: fc.Arbitrary<string>): fc.Arbitrary<TurnShape> {
  return fc.oneof(
    fc.record({ kind: fc.constant('user' as const), text }),
    fc.record({ kind: fc.constant('call' as const), text, output: text }),
  );
}

/** The messages of the shapes (a call's assistant message says `callText`). */
export function shapeMessages(shapes: readonly TurnShape[], callText: string): Message[] {
  const msgs: Message[] = [];
  shapes.forEach((t, i) => {
    if (t.kind === 'user') msgs.push({ role: 'user', content: t.text });
    else {
      const id = `c${i}`;
      msgs.push({
        role: 'assistant',
        content: callText,
        toolCalls: [{ id, name: 'bash', input: { i } }],
      });
      msgs.push({ role: 'tool', toolCallId: id, toolName: 'bash', content: t.output });
    }
  });
  return msgs;
}

/** Messages as a session's history from step `base` on, grouped into turns. */
export function historyTurns(msgs: readonly Message[], base: number): Turn[] {
  return groupTurns(
    msgs.map((m, i) => ({ ...m, stepId: base + i, timestamp: T }) as HistoryMessage),
  );
}

/** A whole page (one chunk) of `content` from step `step`, matched on `billing`. */
export const pageOf = (content: string, step = 0): PackPage => ({
  step_id: step,
  payload_sha256: sha256Hex(content),
  chunk: 0,
  chunks: 1,
  truncated: false,
  content,
  matched_terms: ['billing'],
});
