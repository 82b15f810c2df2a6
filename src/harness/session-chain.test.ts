import { describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { testStore } from '../test-utils/backend-store.js';
import { BACKENDS, type BackendName } from '../test-utils/pg.js';
import { replaySession } from './replay.js';
import { Session } from './session.js';
import { parseEvents, storeEvents } from './session-events.js';
import { stepClock } from './test-utils/session-helpers.js';

type Line = Record<string, unknown> & { prev?: string; config?: Record<string, unknown> };

/** A rejected promise's error (a resolved one fails the test). */
async function refusal(p: Promise<unknown>): Promise<Error & { code?: string; details?: object }> {
  return p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: Error) => e,
  );
}

// The hash chain of the event log: each line written by a chained session carries `prev`, the
// SHA-256 of the line before it. Edits behind the session's back go through the TestStore (the
// file, or the cf_records rows), and both resume and replay must refuse them with the line.
describe.each(BACKENDS)('on %s: the event log hash chain', (backend: BackendName) => {
  async function recorded() {
    const store = testStore(backend, 'chain');
    const open = () => Session.open({ dir: store.where, budget: 4000, clock: stepClock() });
    const s = await open();
    await s.beforeTurn('Run the migration.');
    await s.afterTurn({ role: 'assistant', content: 'Migration 12 applied.' });
    await s.append({ role: 'user', content: 'Delete the production database? NO.' });
    await s.close();
    const lines = (await store.readEventsText()).split('\n').slice(0, -1);
    return { store, open, lines };
  }

  async function expectRefused(store: ReturnType<typeof testStore>, line: number) {
    const path = store.eventsPath();
    const want = {
      code: 'INTEGRITY_CHECK',
      message: expect.stringContaining(`line ${line}: prev does not match line ${line - 1}`),
      details: expect.objectContaining({ line }),
    };
    const resumed = await refusal(
      Session.open({ dir: store.where, budget: 4000, clock: stepClock() }),
    );
    expect(resumed).toMatchObject(want);
    expect(resumed.message).toContain(path);
    expect(await refusal(replaySession({ dir: store.where }))).toMatchObject(want);
  }

  it('chains every line from the hash of the empty string; the log resumes and replays', async () => {
    const { store, open, lines } = await recorded();
    const parsed = lines.map((l) => JSON.parse(l) as Line);
    expect(parsed[0]!.config!.log_chain).toBe('sha256');
    expect(parsed.map((l) => l.prev)).toEqual([
      sha256Hex(''),
      ...lines.slice(0, -1).map(sha256Hex),
    ]);
    // `prev` is a property of the line, not of the event: replay compares as before.
    expect(parseEvents(`${lines.join('\n')}\n`, 'e').every((e) => !('prev' in e))).toBe(true);
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
    const s = await open();
    await s.append({ role: 'user', content: 'And now?' });
    await s.close();
    const after = (await store.readEventsText()).split('\n').slice(0, -1);
    expect(after.length).toBe(lines.length + 1);
    expect((JSON.parse(after.at(-1)!) as Line).prev).toBe(sha256Hex(lines.at(-1)!));
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
  });

  it('storeEvents without a mark chains from the log it reads first', async () => {
    const { store, open, lines } = await recorded();
    const engine = await ContextFold.open({ store: store.where });
    await storeEvents(engine, [
      { type: 'pin', note_id: 0, source: null, text: 'Never drop tables.', recorded_at: 'x' },
    ]);
    await engine.close();
    const after = (await store.readEventsText()).split('\n').slice(0, -1);
    expect((JSON.parse(after.at(-1)!) as Line).prev).toBe(sha256Hex(lines.at(-1)!));
    const s = await open();
    await s.close();
  });

  it('refuses a byte edited in a line that another follows, naming the next line', async () => {
    const { store, lines } = await recorded();
    for (const i of [0, 3, lines.length - 2]) {
      const edited = lines.map((l, k) => (k === i ? l.replace('"type"', '"type" ') : l));
      await store.writeEventsText(`${edited.join('\n')}\n`);
      await expectRefused(store, i + 2);
    }
  });

  it('refuses a dropped middle line and two lines swapped', async () => {
    const { store, lines } = await recorded();
    await store.writeEventsText(`${lines.filter((_, k) => k !== 2).join('\n')}\n`);
    await expectRefused(store, 3);
    const swapped = [...lines.slice(0, 3), lines[4], lines[3], ...lines.slice(5)];
    await store.writeEventsText(`${swapped.join('\n')}\n`);
    await expectRefused(store, 4);
  });

  it('refuses a log whose last line was dropped before a new append', async () => {
    const { store, open, lines } = await recorded();
    const s = await open();
    await s.append({ role: 'user', content: 'Rollback instead.' });
    await s.close();
    const all = (await store.readEventsText()).split('\n').slice(0, -1);
    // The line that was last when the append was written is gone.
    await store.writeEventsText(`${all.filter((_, k) => k !== lines.length - 1).join('\n')}\n`);
    await expectRefused(store, lines.length);
  });

  it('refuses a chained line whose prev was removed, and a chain whose first prev is wrong', async () => {
    const { store, lines } = await recorded();
    const bare = lines.map((l, k) => {
      if (k !== 2) return l;
      const { prev: _p, ...rest } = JSON.parse(l) as Line;
      return JSON.stringify(rest);
    });
    await store.writeEventsText(`${bare.join('\n')}\n`);
    await expectRefused(store, 3);
    const first = { ...(JSON.parse(lines[0]!) as Line), prev: sha256Hex('x') };
    await store.writeEventsText(`${[JSON.stringify(first), ...lines.slice(1)].join('\n')}\n`);
    const e = await refusal(replaySession({ dir: store.where }));
    expect(e).toMatchObject({
      code: 'INTEGRITY_CHECK',
      details: expect.objectContaining({ line: 1 }),
    });
    expect(e.message).toContain('line 1: prev does not match the start of the log');
  });

  it('reads an old (unchained) log as before and chains its continuation from its last line', async () => {
    const { store, open, lines } = await recorded();
    const old = lines.map((l) => {
      const { prev: _p, ...rest } = JSON.parse(l) as Line;
      if (rest.config) delete rest.config.log_chain;
      return JSON.stringify(rest);
    });
    await store.writeEventsText(`${old.join('\n')}\n`);
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
    const s = await open();
    expect(s.history().at(-1)!.content).toBe('Delete the production database? NO.');
    await s.append({ role: 'user', content: 'And now?' });
    await s.close();
    const after = (await store.readEventsText()).split('\n').slice(0, -1);
    expect(after.slice(0, old.length)).toEqual(old);
    const opened = JSON.parse(after[old.length]!) as Line;
    expect(opened).toMatchObject({ type: 'session_opened', prev: sha256Hex(old.at(-1)!) });
    expect(opened.config!.log_chain).toBe('sha256');
    expect((JSON.parse(after.at(-1)!) as Line).prev).toBe(sha256Hex(after.at(-2)!));
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
    // An edit in the old part stays unseen (it has no chain); one in the chained part is refused.
    const edited = after.map((l, k) => (k === old.length ? l.replace('"type"', '"type" ') : l));
    await store.writeEventsText(`${edited.join('\n')}\n`);
    await expectRefused(store, old.length + 2);
  });
});
