import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { replaySession } from '../harness/replay.js';
import { Session } from '../harness/session.js';
import { eventsPath, readEvents } from '../harness/session-events.js';
import { drive, stepClock } from '../harness/test-utils/session-helpers.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { tempDir } from '../test-utils/temp-dir.js';
import { GRID_MAX, RECENT_MAX } from './replay-checkpoints.js';
import { SessionLogReader } from './session-log.js';
import { StoreView } from './store-view.js';
import { buildSessionStore, SESSION_OPTIONS, sessionTurns } from './test-utils/fixtures.js';

// Replay as is, watched: which requests went on from a checkpoint can be read off its results.
vi.mock('../harness/replay.js', async (original) => {
  const m = await original<typeof import('../harness/replay.js')>();
  return { ...m, replaySession: vi.fn(m.replaySession) };
});

const tmp = tempDir('cf-inspect-cp-');
const dir = `${tmp.dir}/.contextfold`;
const info = { id: '.', dir, has_events: true };
afterAll(() => tmp.cleanup());

/** The pack page of each turn as a view without checkpoints (a fresh one per request) shows it. */
async function fresh(turns: readonly number[]): Promise<string[]> {
  const out: string[] = [];
  for (const t of turns) {
    const v = new StoreView(info);
    try {
      out.push(JSON.stringify(await v.pack(t).catch((e: Error) => `${e.name}: ${e.message}`)));
    } finally {
      await v.close();
    }
  }
  return out;
}

const pages = (v: StoreView, turns: readonly number[]) =>
  Promise.all(
    turns.map(async (t) =>
      JSON.stringify(await v.pack(t).catch((e: Error) => `${e.name}: ${e.message}`)),
    ),
  );

/** `resumed` of the replays run since call `from`. */
const resumedSince = async (from: number) =>
  Promise.all(
    vi
      .mocked(replaySession)
      .mock.results.slice(from)
      .map(async (r) => (await r.value).resumed),
  );

beforeAll(async () => {
  await buildSessionStore(dir, 20);
}, 120_000);

describe('pack page with replay checkpoints', () => {
  it('shows the same bytes as without, for every turn, in any order, and after the log grows', async () => {
    const v = new StoreView(info);
    try {
      const order = [19, 3, 10, 11, 12, 0, 19, 18, 7];
      const calls = vi.mocked(replaySession).mock.calls.length;
      const first = [];
      for (const t of order) first.push((await pages(v, [t]))[0]);
      expect(first).toEqual(await fresh(order));
      // Later requests went on from checkpoints the earlier ones left.
      const resumed = await resumedSince(calls);
      expect(resumed.slice(0, 1)).toEqual([null]);
      expect(resumed.filter((r) => r !== null).length).toBeGreaterThan(4);
      expect((await v.timeline(0, 100)).replay).toMatchObject({ ok: true, matches: true });

      // The session goes on while the inspector runs: the log grows by whole lines.
      const session = await Session.open({
        dir,
        ...SESSION_OPTIONS,
        clock: stepClock(Date.UTC(2026, 0, 1)),
      });
      await drive(session, sessionTurns(26).slice(20));
      await session.close();
      const grown = [25, 19, 22, 4, 25, 24];
      const since = vi.mocked(replaySession).mock.calls.length;
      const after = [];
      for (const t of grown) after.push((await pages(v, [t]))[0]);
      expect(after).toEqual(await fresh(grown));
      // The checkpoints of the log before it grew are still used (the timeline's last boundary).
      expect((await resumedSince(since))[0]).toBe(20);
    } finally {
      await v.close();
    }
  }, 240_000);

  it('refuses an edited log exactly as without checkpoints, and a restored one is served again', async () => {
    const v = new StoreView(info);
    const path = eventsPath(dir);
    const orig = readFileSync(path);
    try {
      await pages(v, [25, 13, 20]); // checkpoints up to 25
      const lines = orig.toString('utf8').split('\n').slice(0, -1);
      const sha = (s: string) => createHash('sha256').update(s).digest('hex');
      // An early tool output edited, the hash chain recomputed: the log parses, the store disagrees.
      const events = lines.map((l) => JSON.parse(l));
      const k = events.findIndex(
        (e, i) =>
          i > 10 &&
          e.type === 'append' &&
          e.messages.some((m: { role: string }) => m.role === 'tool'),
      );
      const m = events[k].messages.find((x: { role: string }) => x.role === 'tool');
      m.content = `${m.content} edited`;
      let prev = sha('');
      const rechained = events.map((e) => {
        const { prev: _p, ...rest } = e;
        const line = JSON.stringify({ ...rest, prev });
        prev = sha(line);
        return line;
      });
      const edits: [string, string][] = [
        ['rechained', `${rechained.join('\n')}\n`],
        ['middle line', `${lines.map((l, i) => (i === k ? `${l} ` : l)).join('\n')}\n`],
        ['torn tail', `${orig.toString('utf8')}{"type":"app`],
        [
          'truncated',
          `${lines
            .slice(
              0,
              lines.findLastIndex((l) => l.includes('"turn_started"')),
            )
            .join('\n')}\n`,
        ],
      ];
      for (const [name, text] of edits) {
        writeFileSync(path, text);
        const turns = [25, 24, 13, 2];
        expect([name, ...(await pages(v, turns))]).toEqual([name, ...(await fresh(turns))]);
      }
      // The same bytes, same size and mtime kept: an edit is seen by content, not by stat.
      writeFileSync(path, orig);
      expect(await pages(v, [25])).toEqual(await fresh([25]));
    } finally {
      writeFileSync(path, orig);
      await v.close();
    }
  }, 240_000);

  it('replays from the start when an index entry the earlier turns used was dropped or changed', async () => {
    const d = `${tmp.dir}/changed/.contextfold`;
    await buildSessionStore(d, 14);
    const at = { id: '.', dir: d, has_events: true };
    const freshAt = (turns: readonly number[]) =>
      Promise.all(
        turns.map(async (t) => {
          const f = new StoreView(at);
          try {
            return JSON.stringify(await f.pack(t).catch((e: Error) => `${e.name}: ${e.message}`));
          } finally {
            await f.close();
          }
        }),
      );
    const events = readEvents(d);
    // A step an early turn paged in, and one an early turn folded (never paged in).
    const paged = events.find((e) => e.type === 'page_in' && e.turn < 8);
    const pagedSteps = new Set(events.flatMap((e) => (e.type === 'page_in' ? [e.step_id] : [])));
    const folded = events.find(
      (e) => e.type === 'fold' && e.turn < 12 && !pagedSteps.has(e.step_id),
    );
    if (paged?.type !== 'page_in' || folded?.type !== 'fold') throw new Error('fixture changed');
    const v = new StoreView(at);
    const writer = await ContextFold.open({ dir: d, tokenizer: 'o200k', cacheDir: false });
    try {
      const turns = [13, 12, 9];
      await pages(v, turns); // checkpoints up to 13
      const before = vi.mocked(replaySession).mock.calls.length;
      await pages(v, [13]);
      expect(await resumedSince(before)).toEqual([13]);
      const check = async (name: string, refused: boolean) => {
        const since = vi.mocked(replaySession).mock.calls.length;
        const shown = await pages(v, turns);
        expect([name, ...shown]).toEqual([name, ...(await freshAt(turns))]);
        if (!refused) return;
        // A full replay refuses each change: so does the page, not a resumed replay.
        for (const s of shown) expect(s).toMatch(/^"(IntegrityCheckError|NodeNotFoundError)/);
        const settled = await Promise.allSettled(
          vi
            .mocked(replaySession)
            .mock.results.slice(since)
            .map((r) => r.value),
        );
        expect(settled.filter((r) => r.status === 'fulfilled')).toEqual([]);
      };
      await writer.dropEntry(paged.step_id, 'test');
      await check('paged entry dropped', true);
      await writer.reindexOrphan(paged.step_id);
      await check('paged entry back', false);
      await writer.dropEntry(folded.step_id, 'test');
      await check('folded entry dropped', true);
      // Its node moved aside and the step folded again with other bytes, through the library.
      await writer.quarantine(
        `${d}/cold_nodes/step_${String(folded.step_id).padStart(6, '0')}.json`,
      );
      await writer.fold({ stepId: folded.step_id, summary: 'other', content: 'other bytes' });
      await check('folded node changed', true);
    } finally {
      await writer.close();
      await v.close();
    }
  }, 240_000);

  it('timeline: a log grown by whole lines goes on from the last checkpoint, with the rows of a full replay', async () => {
    const d = `${tmp.dir}/grow/.contextfold`;
    await buildSessionStore(d, 10);
    const at = { id: '.', dir: d, has_events: true };
    const whole = async () => {
      const f = new StoreView(at);
      try {
        return JSON.stringify(await f.timeline(0, 100));
      } finally {
        await f.close();
      }
    };
    const v = new StoreView(at);
    try {
      expect(JSON.stringify(await v.timeline(0, 100))).toBe(await whole());
      const session = await Session.open({
        dir: d,
        ...SESSION_OPTIONS,
        clock: stepClock(Date.UTC(2026, 0, 1)),
      });
      await drive(session, sessionTurns(14).slice(10, 12));
      const since = vi.mocked(replaySession).mock.calls.length;
      const grown = JSON.stringify(await v.timeline(0, 100));
      expect(grown).toBe(await whole());
      expect(JSON.parse(grown).turns).toBe(12);
      // The replay after the log grew went on from the end of the one before.
      expect((await resumedSince(since))[0]).toBe(10);
      // Grown again, mid-turn (a pack built, its turn not completed), then to the end.
      await session.beforeTurn(sessionTurns(14)[12]!.prompt);
      expect(JSON.stringify(await v.timeline(0, 100))).toBe(await whole());
      await session.afterTurn(sessionTurns(14)[12]!.response);
      await drive(session, sessionTurns(14).slice(13));
      await session.close();
      const again = vi.mocked(replaySession).mock.calls.length;
      expect(JSON.stringify(await v.timeline(0, 100))).toBe(await whole());
      expect((await resumedSince(again))[0]).toBe(12);
    } finally {
      await v.close();
    }
  }, 240_000);

  it('keeps at most GRID_MAX + RECENT_MAX checkpoints', async () => {
    const { ReplayCheckpoints } = await import('./replay-checkpoints.js');
    const set = new ReplayCheckpoints();
    const offer = set.offer(1);
    for (let t = 1; t <= 5000; t++)
      offer(t, () => Object.freeze({ turns: t, events: t, bytes: 0 }));
    expect(set.size).toBeLessThanOrEqual(GRID_MAX);
    for (let t = 1; t <= 10; t++)
      set.offer(1, 100 * t)(100 * t, () => ({ turns: 100 * t, events: 0, bytes: 0 }));
    expect(set.size).toBeLessThanOrEqual(GRID_MAX + RECENT_MAX);
    expect(set.before(1, 1000)?.turns).toBe(1000);
    expect(set.before(1, 4999)?.turns).toBeLessThanOrEqual(4999);
    // Another generation of the log: nothing kept.
    expect(set.before(2, 4999)).toBeUndefined();
    expect(set.size).toBe(0);
  });

  it('keeps at most a budget of estimated bytes across sessions, the least recently used dropped first', async () => {
    const { CheckpointBudget, ReplayCheckpoints } = await import('./replay-checkpoints.js');
    const budget = new CheckpointBudget(10_000);
    const a = new ReplayCheckpoints(budget);
    const b = new ReplayCheckpoints(budget);
    const cp = (turns: number, bytes: number) => () =>
      Object.freeze({ turns, events: turns, bytes });
    const offerA = a.offer(1);
    for (let t = 8; t <= 32; t += 8) offerA(t, cp(t, 2000)); // 8 KB in a
    expect(budget.total).toBe(8000);
    expect(a.before(1, 8)?.turns).toBe(8); // 8 used again: 16 is now the least recently used
    b.offer(1, 5)(5, cp(5, 3000)); // 11 KB: one of a's goes
    expect(budget.total).toBe(9000);
    expect(a.before(1, 16)?.turns).toBe(8);
    expect(a.size).toBe(3);
    b.offer(1, 6)(6, cp(6, 6000)); // 15 KB: 24, 32, then b's 5 (8 was used after it) go
    expect(budget.total).toBeLessThanOrEqual(10_000);
    expect([a.size, b.size, a.before(1, 100)?.turns, b.before(1, 100)?.turns]).toEqual([
      1, 1, 8, 6,
    ]);
    // A new generation, a closed view: their bytes are counted out.
    expect(a.before(2, 100)).toBeUndefined();
    b.clear();
    expect(budget.total).toBe(0);
    // One checkpoint larger than the whole budget is not kept.
    b.offer(1, 7)(7, cp(7, 20_000));
    expect([b.size, budget.total]).toEqual([0, 0]);
  });
});

describe('SessionLogReader', () => {
  it('parses a grown log’s new lines only, as a whole read would; any other change is a new generation', async () => {
    const d = `${tmp.dir}/log`;
    const reader = new SessionLogReader(d);
    expect(reader.read()).toBeNull();
    const session = await Session.open({ dir: d, ...SESSION_OPTIONS, clock: stepClock() });
    await drive(session, sessionTurns(3));
    const a = reader.read()!;
    expect(a.events).toEqual(readEvents(d));
    expect(reader.read()!.events).toBe(a.events); // unchanged: the same objects
    await drive(session, sessionTurns(5).slice(3));
    await session.close();
    const b = reader.read()!;
    expect(b.generation).toBe(a.generation);
    expect(b.events).toEqual(readEvents(d));
    expect(b.events.slice(0, a.events.length).every((e, i) => e === a.events[i])).toBe(true);
    const text = readFileSync(eventsPath(d), 'utf8');
    writeFileSync(eventsPath(d), text.replace('"turn":1,', '"turn":2,'));
    expect(() => reader.read()).toThrow(/prev does not match/);
    writeFileSync(eventsPath(d), `${text}{"type":"append"}\n`);
    expect(() => reader.read()).toThrow(/line \d+ is not a session event/);
    expect(() => readEvents(d)).toThrow(/line \d+ is not a session event/);
    const cut = text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1);
    writeFileSync(eventsPath(d), cut);
    expect(() => reader.read()).toThrow(/line \d+ is missing/); // the head records more lines
    // A log rewritten shorter with a head of its own (what the head cannot tell from an edit).
    const lines = cut.split('\n').slice(0, -1);
    writeFileSync(
      `${eventsPath(d)}.head`,
      JSON.stringify({ lines: lines.length, last_sha256: sha256Hex(lines.at(-1)!) }),
    );
    expect(reader.read()!.generation).toBeGreaterThan(b.generation);
  }, 120_000);
});
