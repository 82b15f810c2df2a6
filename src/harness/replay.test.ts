import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, PG_MISSING, PG_URL, storeFor } from '../test-utils/pg.js';
import { type ContextPack, packSha256 } from './pack.js';
import { replaySession } from './replay.js';
import { Session } from './session.js';
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
