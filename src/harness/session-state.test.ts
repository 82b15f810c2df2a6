import { describe, expect, it } from 'vitest';
import type { FoldedStep } from '../protocol/types.js';
import type { HistoryRecord } from './messages.js';
import type { SessionConfig } from './session-events.js';
import { SessionState } from './session-state.js';

const config = {
  budget: 1000,
  keep_recent: 2,
  fold_threshold: 100,
  high_water_tokens: 800,
  low_water_tokens: 500,
  page_reserve: 100,
  tokenizer: 'o200k',
  summarizer: 'default',
  step_ids: 'turns',
} as SessionConfig;

const at = '2025-01-01T00:00:00Z';

/** A state with a system message and `users` user messages (one turn each). */
function state(users: number): SessionState {
  const s = new SessionState();
  s.apply({ type: 'session_opened', config, recorded_at: at });
  const messages: HistoryRecord[] = [{ step_id: 0, role: 'system', content: 'sys', timestamp: at }];
  for (let i = 1; i <= users; i++) {
    messages.push({ step_id: i, role: 'user', content: `u${i}`, timestamp: at });
  }
  s.apply({ type: 'append', from: 0, messages, stripped: [], recorded_at: at });
  return s;
}

function fold(s: SessionState, step: number): void {
  s.apply({
    type: 'fold',
    turn: 0,
    step_id: step,
    steps: [step],
    reason: 'budget',
    summary_source: 'default',
    payload_sha256: 'a'.repeat(64),
    record: { step_id: step } as FoldedStep,
    recorded_at: at,
  });
}

describe('SessionState conversation and settled', () => {
  it('lists the non-system turns, and counts the leading ones that are folded', () => {
    const s = state(5);
    expect(s.conversation.map((t) => t.stepId)).toEqual([1, 2, 3, 4, 5]);
    expect(s.settled()).toBe(0);
    fold(s, 2);
    expect(s.settled()).toBe(0); // turn 1 is not folded: nothing before it is settled
    fold(s, 1);
    expect(s.settled()).toBe(2);
    fold(s, 4);
    expect(s.settled()).toBe(2);
    fold(s, 3);
    expect(s.settled()).toBe(4);
  });

  it('a snapshot goes on with its own copy of the last turn and the same settled count', () => {
    const s = state(3);
    fold(s, 1);
    expect(s.settled()).toBe(1);
    const copy = s.snapshot();
    expect(copy.settled()).toBe(1);
    expect(copy.conversation.map((t) => t.stepId)).toEqual([1, 2, 3]);
    expect(copy.conversation.at(-1)).toBe(copy.turns.at(-1));
    expect(copy.conversation.at(-1)).not.toBe(s.conversation.at(-1));
    fold(copy, 2);
    expect(copy.settled()).toBe(2);
    expect(s.settled()).toBe(1);
  });
});
