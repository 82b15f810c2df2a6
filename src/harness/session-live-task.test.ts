import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from './messages.js';
import { type ContextPack, renderPackText } from './pack.js';
import { beginCall } from './per-call.js';
import { replaySession } from './replay.js';
import { Session } from './session.js';
import { bigTestLog, scratch, stepClock } from './test-utils/session-helpers.js';

const BUDGET = 1500;
const REQUEST = 'TASK-REQUEST: run the suite and fix what fails';

/** Earlier exchanges: `n` short user/assistant pairs, each line named so the test can find it. */
function earlier(n: number): Message[] {
  return Array.from({ length: n }, (_, i): Message[] => [
    { role: 'user', content: `EARLIER-QUESTION-${i}: what does module ${i} do?` },
    { role: 'assistant', content: `EARLIER-ANSWER-${i}: module ${i} parses the config.` },
  ]).flat();
}

const call: Message = {
  role: 'assistant',
  content: '',
  toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'npm test' } }],
};
const result: Message = {
  role: 'tool',
  toolCallId: 'c1',
  toolName: 'bash',
  exitCode: 1,
  content: bigTestLog(),
};

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function firstPack(history: Message[]): Promise<{ pack: ContextPack; dir: string }> {
  const s = scratch();
  cleanups.push(s.cleanup);
  const session = await Session.open({ dir: s.dir, budget: BUDGET, clock: stepClock() });
  const pack = await beginCall(session, history);
  await session.afterTurn();
  await session.close();
  return { pack, dir: s.dir };
}

describe('the live exchange of a tool loop (a large pending output)', () => {
  it('keeps the user request the loop works on, folds nothing for it, and cuts the output', async () => {
    const { pack, dir } = await firstPack([
      ...earlier(2),
      { role: 'user', content: REQUEST },
      call,
      result,
    ]);
    const text = renderPackText(pack);
    // Before, the budget folded the request and every earlier turn, and dropped their records:
    // the model continued with a tool result and no task.
    expect(text).toContain(REQUEST);
    expect(pack.metadata.folded).toEqual([]);
    expect(text).toContain('HEAD-FIRST-LINE');
    expect(text).toContain('TAIL-LAST-LINE');
    expect(text).not.toContain('MIDDLE-ONLY-IN-STORE');
    expect(pack.metadata.live_excerpts.map((e) => e.step_id)).toEqual([6]);
    expect(pack.tokens).toBeLessThanOrEqual(BUDGET);
    expect((await replaySession({ dir })).matches).toBe(true);
  });

  it('keeps earlier turns beside the cut output when they fit in the other half of the room', async () => {
    const { pack } = await firstPack([
      ...earlier(3),
      { role: 'user', content: REQUEST },
      call,
      result,
    ]);
    const text = renderPackText(pack);
    for (let i = 0; i < 3; i++) expect(text).toContain(`EARLIER-ANSWER-${i}`);
    const live = pack.metadata.live_excerpts[0]!;
    expect(live.sent_tokens).toBeGreaterThanOrEqual(Math.floor((BUDGET - 100) / 2) - 60);
    expect(pack.tokens).toBeLessThanOrEqual(BUDGET);
  });

  it("Claude Code's shape (text after the tool results of one message): the tool turn stays live", async () => {
    const reminder: Message = {
      role: 'user',
      content: '<system-reminder>be brief</system-reminder>',
    };
    const { pack } = await firstPack([{ role: 'user', content: REQUEST }, call, result, reminder]);
    const text = renderPackText(pack);
    // Before, the reminder was the prompt and the tool turn an old turn: folded whole, so the
    // model got the reminder alone.
    expect(pack.metadata.folded).toEqual([]);
    expect(text).toContain(REQUEST);
    expect(text).toContain('HEAD-FIRST-LINE');
    expect(text).toContain('TAIL-LAST-LINE');
    expect(text).toContain('be brief');
    expect(pack.tokens).toBeLessThanOrEqual(BUDGET);
  });

  it('a reply after the tool result ends the exchange: the next prompt is an ordinary turn', async () => {
    const reply: Message = { role: 'assistant', content: 'One test fails: expected 3, got 4.' };
    const next: Message = { role: 'user', content: 'Now update the changelog' };
    const { pack } = await firstPack([
      { role: 'user', content: REQUEST },
      call,
      result,
      reply,
      next,
    ]);
    // The large tool turn is not live any more: the budget folds it.
    expect(pack.metadata.folded.map((f) => f.step_id)).toContain(1);
    expect(renderPackText(pack)).not.toContain('ok 599 - suite 599 passes');
  });
});
