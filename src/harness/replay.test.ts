import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { BACKENDS, PG_MISSING, PG_URL, storeFor } from '../test-utils/pg.js';
import { type ContextPack, packSha256 } from './pack.js';
import { type ReplayCheckpoint, replaySession } from './replay.js';
import { Session } from './session.js';
import { loadEventLog } from './session-events.js';
import { syntheticSession } from './synthetic.js';
import { drive, scratch, smallPolicy, stamped, stepClock } from './test-utils/session-helpers.js';

/** Every file under `dir` with its size, modification time and bytes. */
function fingerprint(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .sort()
    .map((f) => join(dir, f))
    .filter((p) => statSync(p).isFile())
    .map((p) => `${p} ${statSync(p).mtimeMs} ${readFileSync(p).toString('base64')}`);
}

// The session log and the store through either backend: a matrix.
for (const backend of BACKENDS) {
  const store = scratch();
  let live: ContextPack[] = [];
  let where = store.dir;
  afterAll(() => store.cleanup());

  beforeAll(async () => {
    if (backend === 'postgres' && !PG_URL) throw new Error(`CI=true: ${PG_MISSING}`);
    where = storeFor(backend, store.dir, 'replay');
    const session = await Session.open({
      dir: where,
      budget: 3000,
      keepRecent: 2,
      policy: smallPolicy(800, 1000),
      clock: stepClock(),
    });
    live = (await drive(session, stamped(syntheticSession({ turns: 12, outputLines: 30 })))).map(
      (t) => t.pack,
    );
    await session.close();
  });

  describe(`replay options for long sessions (${backend} store)`, () => {
    it('onPack sees every pack in order; keepPacks: false keeps only the last', async () => {
      const seen: string[] = [];
      const r = await replaySession({
        dir: where,
        keepPacks: false,
        onPack: (p) => seen.push(packSha256(p)),
      });
      expect(r.matches).toBe(true);
      expect(seen).toEqual(live.map(packSha256));
      expect(r.packs).toHaveLength(1);
      expect(packSha256(r.packs[0]!)).toBe(packSha256(live[live.length - 1]!));
    });

    it('atTurn stops after that turn’s pack, and names the range for a turn that does not exist', async () => {
      const r = await replaySession({ dir: where, atTurn: 4 });
      expect(r.matches).toBe(true);
      expect(r.packs).toHaveLength(5);
      expect(packSha256(r.packs[4]!)).toBe(packSha256(live[4]!));
      await expect(replaySession({ dir: where, atTurn: 12 })).rejects.toThrow(
        /no turn 12; its turns are 0\.\.11/,
      );
      // A misspelt option is refused (it was ignored: the whole session replayed).
      await expect(replaySession({ dir: where, atTrun: 4 } as never)).rejects.toMatchObject({
        code: 'USAGE',
        message: expect.stringMatching(/^replaySession has no option 'atTrun' \(options: dir, /),
      });
    });

    it('reads and verifies a page paged in again with the same window once per replay', async () => {
      const cf = await ContextFold.open({ store: where, readOnly: true, tokenizer: 'o200k' });
      try {
        const log = await loadEventLog(cf);
        const pages = log.events.filter((e) => e.type === 'page_in');
        const distinct = new Set(
          pages.map((p) => JSON.stringify([p.step_id, p.window ?? null, p.cap, p.chunk])),
        );
        // The fixture pages some node in again (else this test would show nothing).
        expect(distinct.size).toBeLessThan(pages.length);
        const hydrate = vi.spyOn(cf, 'hydrate');
        const seen: string[] = [];
        const r = await replaySession({ engine: cf, log, onPack: (p) => seen.push(packSha256(p)) });
        expect(r.matches).toBe(true);
        expect(seen).toEqual(live.map(packSha256));
        expect(hydrate).toHaveBeenCalledTimes(distinct.size);
        // Another replay reads them again.
        await replaySession({ engine: cf, log });
        expect(hydrate).toHaveBeenCalledTimes(2 * distinct.size);
      } finally {
        await cf.close({ compact: false });
      }
    });

    it('goes on from a checkpoint with the packs and verdict of a replay from the start', async () => {
      const cf = await ContextFold.open({ store: where, readOnly: true, tokenizer: 'o200k' });
      try {
        const log = await loadEventLog(cf);
        const kept: ReplayCheckpoint[] = [];
        const full = await replaySession({
          engine: cf,
          log,
          checkpoint: (turns, take) => {
            if (turns % 3 === 0) kept.push(take());
          },
        });
        expect(kept.map((c) => c.turns)).toEqual([3, 6, 9, 12]);
        for (const turn of [3, 5, 9, 11]) {
          const from = kept.filter((c) => c.turns <= turn).pop()!;
          const r = await replaySession({ engine: cf, log, atTurn: turn, from });
          expect(r.resumed).toBe(from.turns);
          expect(r.packs.map(packSha256)).toEqual(live.slice(from.turns, turn + 1).map(packSha256));
          expect(r.matches).toBe(true);
        }
        const last = kept[2]!;
        const toEnd = await replaySession({ engine: cf, log, from: last });
        expect(toEnd.resumed).toBe(9);
        expect(toEnd.events.map((e) => e.type)).toEqual(
          full.events.slice(last.events).map((e) => e.type),
        );
        // Equal events read again are the same log; a turn before it, atStep, or another
        // first event is a replay from the start.
        const again = await loadEventLog(cf);
        expect(
          (await replaySession({ engine: cf, log: again, atTurn: 10, from: last })).resumed,
        ).toBe(9);
        expect(
          (await replaySession({ engine: cf, log, atTurn: 8, from: last })).resumed,
        ).toBeNull();
        const step = live[10]!.step_id;
        expect(
          (await replaySession({ engine: cf, log, atStep: step, from: last })).resumed,
        ).toBeNull();
        const edited = [...log.events];
        const k = edited.findIndex((e) => e.type === 'pack_built' && e.turn === 2);
        edited[k] = { ...edited[k]!, pack_sha256: '0'.repeat(64) } as (typeof edited)[number];
        const other = await replaySession({
          engine: cf,
          log: { ...log, events: edited },
          atTurn: 10,
          from: last,
        });
        expect(other.resumed).toBeNull();
        // The forged hash is a mismatch, at its index in the log.
        expect(other.mismatch?.index).toBe(k);
        expect(other.matches).toBe(false);
        // A later event that answers for a turn before the checkpoint: from the start too.
        const late = [...log.events, { ...log.events.find((e) => e.type === 'page_in')! }];
        expect(
          (await replaySession({ engine: cf, log: { ...log, events: late }, from: last })).resumed,
        ).toBeNull();
        // An object shaped like a checkpoint is not one.
        expect(
          (
            await replaySession({
              engine: cf,
              log,
              atTurn: 10,
              from: { turns: 9, events: last.events, bytes: last.bytes },
            })
          ).resumed,
        ).toBeNull();
      } finally {
        await cf.close({ compact: false });
      }
    });

    it.runIf(backend === 'local')(
      'writes nothing, not even the derived index (CONF-08)',
      async () => {
        const before = fingerprint(where);
        expect((await replaySession({ dir: where })).matches).toBe(true);
        expect(fingerprint(where)).toEqual(before);
      },
    );
  });
}
