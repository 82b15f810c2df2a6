import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContextPack, packSha256 } from './pack.js';
import { replaySession } from './replay.js';
import { Session } from './session.js';
import { syntheticSession } from './synthetic.js';
import { drive, scratch, smallPolicy, stamped, stepClock } from './test-utils/session-helpers.js';

const store = scratch();
let live: ContextPack[] = [];

beforeAll(async () => {
  const session = await Session.open({
    dir: store.dir,
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
afterAll(() => store.cleanup());

describe('replay options for long sessions', () => {
  it('onPack sees every pack in order; keepPacks: false keeps only the last', async () => {
    const seen: string[] = [];
    const r = await replaySession({
      dir: store.dir,
      keepPacks: false,
      onPack: (p) => seen.push(packSha256(p)),
    });
    expect(r.matches).toBe(true);
    expect(seen).toEqual(live.map(packSha256));
    expect(r.packs).toHaveLength(1);
    expect(packSha256(r.packs[0]!)).toBe(packSha256(live[live.length - 1]!));
  });

  it('atTurn stops after that turn’s pack, and names the range for a turn that does not exist', async () => {
    const r = await replaySession({ dir: store.dir, atTurn: 4 });
    expect(r.matches).toBe(true);
    expect(r.packs).toHaveLength(5);
    expect(packSha256(r.packs[4]!)).toBe(packSha256(live[4]!));
    await expect(replaySession({ dir: store.dir, atTurn: 12 })).rejects.toThrow(
      /no turn 12; its turns are 0\.\.11/,
    );
  });
});
