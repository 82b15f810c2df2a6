import { describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { testStore } from '../test-utils/backend-store.js';
import { BACKENDS, type BackendName } from '../test-utils/pg.js';
import { replaySession } from './replay.js';
import { Session } from './session.js';
import { parseEvents, storeEvents } from './session-events.js';
import { rechained, stepClock } from './test-utils/session-helpers.js';

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

/** A chained session of three events recorded on `backend`, its store, and its log's lines. */
async function recordedSession(backend: BackendName, name: string) {
  const store = testStore(backend, name);
  const open = () => Session.open({ dir: store.where, budget: 4000, clock: stepClock() });
  const s = await open();
  await s.beforeTurn('Run the migration.');
  await s.afterTurn({ role: 'assistant', content: 'Migration 12 applied.' });
  await s.append({ role: 'user', content: 'Delete the production database? NO.' });
  await s.close();
  const lines = (await store.readEventsText()).split('\n').slice(0, -1);
  return { store, open, lines };
}

// The hash chain of the event log: each line written by a chained session carries `prev`, the
// SHA-256 of the line before it. Edits behind the session's back go through the TestStore (the
// file, or the cf_records rows), and both resume and replay must refuse them with the line.
describe.each(BACKENDS)('on %s: the event log hash chain', (backend: BackendName) => {
  const recorded = () => recordedSession(backend, 'chain');

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
    await store.writeEventsText(`${old.join('\n')}\n`, { head: 'remove' });
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

// The head beside the chain: the log's line count and the SHA-256 of its last line, rewritten
// with every append (a file beside `events.jsonl`, a row on PostgreSQL). It catches what the
// chain cannot: lines cut off the end, and an edit of the last line.
describe.each(BACKENDS)('on %s: the event log head', (backend: BackendName) => {
  const recorded = () => recordedSession(backend, 'head');

  const text = (lines: readonly string[]) => lines.map((l) => `${l}\n`).join('');

  async function expectRefused(store: ReturnType<typeof testStore>, line: number, what: string) {
    const want = {
      code: 'INTEGRITY_CHECK',
      message: expect.stringContaining(what),
      details: expect.objectContaining({ line }),
    };
    const resumed = await refusal(
      Session.open({ dir: store.where, budget: 4000, clock: stepClock() }),
    );
    expect(resumed).toMatchObject(want);
    expect(resumed.message).toContain(`${store.eventsPath()} line ${line}`);
    expect(await refusal(replaySession({ dir: store.where }))).toMatchObject(want);
  }

  it('records the line count and the hash of the last line, with every append', async () => {
    const { store, open, lines } = await recorded();
    expect(JSON.parse(lines[0]!).config.log_head).toBe('sha256');
    const head = JSON.parse((await store.readEventsHead())!);
    expect(head).toMatchObject({ lines: lines.length, last_sha256: sha256Hex(lines.at(-1)!) });
    const s = await open();
    await s.append({ role: 'user', content: 'And now?' });
    await s.close();
    const after = (await store.readEventsText()).split('\n').slice(0, -1);
    expect(JSON.parse((await store.readEventsHead())!)).toMatchObject({
      lines: after.length,
      last_sha256: sha256Hex(after.at(-1)!),
    });
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
  });

  it('refuses lines cut off the end, naming the first missing line', async () => {
    const { store, lines } = await recorded();
    await store.writeEventsText(text(lines.slice(0, -1)), { head: 'keep' });
    await expectRefused(store, lines.length, `line ${lines.length} is missing`);
    await store.writeEventsText(text(lines.slice(0, 2)), { head: 'keep' });
    await expectRefused(store, 3, `records ${lines.length} lines`);
    // All of them: an empty log whose head remains.
    await store.writeEventsText('', { head: 'keep' });
    await expectRefused(store, 1, 'line 1 is missing');
  });

  it('refuses an edit of the last line, naming it', async () => {
    const { store, lines } = await recorded();
    const edited = [...lines.slice(0, -1), lines.at(-1)!.replace('NO.', 'YES')];
    await store.writeEventsText(text(edited), { head: 'keep' });
    await expectRefused(store, lines.length, "does not match the log's head");
    // Cut back one line and the new last line re-chained after it: still not the head's line.
    const other = JSON.stringify({
      type: 'pin',
      note_id: 0,
      source: null,
      text: 'x',
      recorded_at: 'x',
      prev: sha256Hex(lines.at(-2)!),
    });
    await store.writeEventsText(text([...lines.slice(0, -1), other]), { head: 'keep' });
    await expectRefused(store, lines.length, "does not match the log's head");
  });

  it('accepts a log longer than its head whose extra lines chain (a crash before the head write)', async () => {
    const { store, open, lines } = await recorded();
    const pin = {
      type: 'pin',
      note_id: 0,
      source: null,
      text: 'Never drop tables.',
      recorded_at: 'x',
      prev: sha256Hex(lines.at(-1)!),
    };
    await store.writeEventsText(text([...lines, JSON.stringify(pin)]), { head: 'keep' });
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
    const s = await open();
    expect(s.status().pinned).toBe(1);
    await s.append({ role: 'user', content: 'And now?' });
    await s.close();
    const after = (await store.readEventsText()).split('\n').slice(0, -1);
    expect(JSON.parse((await store.readEventsHead())!).lines).toBe(after.length);
    // Extra lines that do not chain are refused by the chain.
    const { prev: _p, ...bare } = pin;
    await store.writeEventsText(text([...lines, JSON.stringify(bare)]), { head: 'keep' });
    await expectRefused(store, lines.length + 1, 'prev does not match');
  });

  it('accepts a log whose head records no lines (a crash during its first append)', async () => {
    const { store, lines } = await recorded();
    await store.writeEventsHead(JSON.stringify({ lines: 0, last_sha256: sha256Hex('') }));
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
    const s = await Session.open({ dir: store.where, budget: 4000, clock: stepClock() });
    await s.append({ role: 'user', content: 'And now?' });
    await s.close();
    expect(JSON.parse((await store.readEventsHead())!).lines).toBe(lines.length + 1);
  });

  it('refuses a log recording log_head whose head is missing, naming that line', async () => {
    const { store, lines } = await recorded();
    await store.writeEventsText(text(lines), { head: 'remove' });
    await expectRefused(store, 1, 'records log_head, but the log');
  });

  it('refuses a head that is not a head, naming it', async () => {
    const { store } = await recorded();
    const zero = `{"lines":0,"last_sha256":"${sha256Hex('x')}"}`;
    for (const bad of ['{"lines":3', '{"lines":-1,"last_sha256":"00"}', zero, '[]']) {
      await store.writeEventsHead(bad);
      const e = await refusal(replaySession({ dir: store.where }));
      expect(e).toMatchObject({ code: 'INTEGRITY_CHECK' });
      expect(e.message).toContain(`${store.eventsPath()}.head is not a log head`);
    }
  });

  it('reads a chained log from before the head as before; its continuation records log_head', async () => {
    const { store, open, lines } = await recorded();
    // As the version before the head wrote it: no log_head, no head.
    const old = rechained(text(lines).replaceAll(',"log_head":"sha256"', ''));
    await store.writeEventsText(old, { head: 'remove' });
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
    const s = await open();
    await s.append({ role: 'user', content: 'And now?' });
    await s.close();
    const after = (await store.readEventsText()).split('\n').slice(0, -1);
    expect(text(after.slice(0, lines.length))).toBe(old);
    expect(JSON.parse(after[lines.length]!)).toMatchObject({
      type: 'session_opened',
      config: expect.objectContaining({ log_head: 'sha256' }),
    });
    expect(JSON.parse((await store.readEventsHead())!).lines).toBe(after.length);
    expect((await replaySession({ dir: store.where })).matches).toBe(true);
    // Its head is now required: removing it is refused at the session_opened that asked for it.
    await store.writeEventsText(text(after), { head: 'remove' });
    await expectRefused(store, lines.length + 1, 'records log_head, but the log');
  });
});
