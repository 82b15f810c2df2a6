import { describe, expect, it } from 'vitest';
import { type TestStore, testStore } from '../test-utils/backend-store.js';
import { BACKENDS, type BackendName } from '../test-utils/pg.js';
import type { Message } from './messages.js';
import { renderPackText } from './pack.js';
import { beginCall, endCall } from './per-call.js';
import { replaySession } from './replay.js';
import { Session } from './session.js';
import { parseEvents } from './session-events.js';
import { bigTestLog, stepClock } from './test-utils/session-helpers.js';

const BUDGET = 1500;

/** The event log as stored (the file, or the store's rows), checked like the file. */
async function readEvents(st: TestStore) {
  return parseEvents(await st.readEventsText(), st.eventsPath());
}

const log = bigTestLog();
const history: Message[] = [
  { role: 'user', content: 'Run the tests' },
  {
    role: 'assistant',
    content: '',
    toolCalls: [{ id: 'c1', name: 'bash', input: { command: 'npm test' } }],
  },
  { role: 'tool', toolCallId: 'c1', toolName: 'bash', exitCode: 1, content: log },
  { role: 'assistant', content: 'One test fails: expected 3, got 4.' },
  { role: 'user', content: 'Fix the off-by-one in the counter' },
  { role: 'assistant', content: 'Fixed.' },
  { role: 'user', content: 'Now update the changelog' },
];

async function run(backend: BackendName, liveOverflow?: 'excerpt' | 'send-whole') {
  const store = testStore(backend, 'overflow');
  const session = await Session.open({
    dir: store.where,
    budget: BUDGET,
    keepRecent: 1,
    pageInToolOutput: true,
    clock: stepClock(),
    ...(liveOverflow ? { liveOverflow } : {}),
  });
  const packs = [];
  for (const at of [1, 3, 5, 7]) {
    packs.push(await beginCall(session, history.slice(0, at)));
    await endCall(session);
  }
  const kept = session.history()[2]!.content;
  await session.close();
  return { store, packs, kept };
}

describe.each(BACKENDS)('on %s: a session with a live tool output 3× the budget', (backend) => {
  it('sends a bounded pack, records the decision, keeps every byte, and replays identically', async () => {
    const { store, packs, kept } = await run(backend);
    const live = packs[1]!;
    expect(live.tokens).toBeLessThanOrEqual(BUDGET);
    expect(live.metadata.over_budget).toBe(false);
    const text = renderPackText(live);
    expect(text).toContain('HEAD-FIRST-LINE $ npm test\n');
    expect(text).toContain('\nTAIL-LAST-LINE 1 failing: expected 3, got 4');
    expect(text).not.toContain('MIDDLE-ONLY-IN-STORE');
    expect(text).toMatch(
      /\[contextfold: \d+ tokens of this output left out of this call to fit the 1500-token budget; the whole output is kept in the session \(step 2\)\]/,
    );
    for (const p of packs) expect(p.tokens).toBeLessThanOrEqual(BUDGET);

    // The session's history keeps the whole output; so does its cold node once it folds.
    expect(kept).toBe(log);
    const folded = (await readEvents(store)).find((e) => e.type === 'fold' && e.step_id === 1);
    expect(folded).toBeDefined();
    const node = (await store.readNode(1))!.toString('utf8');
    expect(node).toContain('MIDDLE-ONLY-IN-STORE pass 300');
    expect(node).toContain('TAIL-LAST-LINE');

    const events = await readEvents(store);
    const opened = events.find((e) => e.type === 'session_opened');
    expect(opened?.type === 'session_opened' && opened.config.live_overflow).toBe('excerpt');
    const cut = events.filter((e) => e.type === 'live_excerpt');
    expect(cut).toHaveLength(1);
    expect(cut[0]).toMatchObject({ turn: 1, notes: [{ step_id: 2, role: 'tool' }] });
    expect(cut[0]!.type === 'live_excerpt' && cut[0]!.notes).toEqual(live.metadata.live_excerpts);

    const replay = await replaySession({ dir: store.where });
    expect(replay.mismatch).toBeNull();
    expect(replay.matches).toBe(true);
    expect(replay.packs.map(renderPackText)).toEqual(packs.map(renderPackText));
  });

  it("'send-whole' sends it whole, over budget, and replays that too", async () => {
    const { store, packs } = await run(backend, 'send-whole');
    expect(packs[1]!.metadata.over_budget).toBe(true);
    expect(renderPackText(packs[1]!)).toContain('MIDDLE-ONLY-IN-STORE');
    expect((await readEvents(store)).some((e) => e.type === 'live_excerpt')).toBe(false);
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
  });

  it('rejects an unknown mode in one line', async () => {
    const store = testStore(backend, 'overflow');
    await expect(
      Session.open({ dir: store.where, budget: BUDGET, liveOverflow: 'truncate' as never }),
    ).rejects.toThrow("liveOverflow must be 'excerpt' or 'send-whole', got \"truncate\"");
  });
});
