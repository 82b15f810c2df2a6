import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../harness/session.js';
import { eventsPath } from '../harness/session-events.js';
import { syntheticSession } from '../harness/synthetic.js';
import { getJson, spawnInspector } from './inspect-overview.js';

/** What {@link benchInspectPack} measures (milliseconds, but `turns` and `events_bytes`). */
export interface InspectPackBench {
  turns: number;
  events_bytes: number;
  /** Recording the session (every `beforeTurn` and `afterTurn`). */
  record_ms: number;
  /** The pack page of each turn as the first request of a fresh `contextfold inspect`. */
  first_request_ms: Record<string, number>;
  /** The same pages asked for again in one process (replayed from the checkpoint before them). */
  again_ms: Record<string, number>;
  /** The page of the turn after one just shown. */
  next_turn_ms: number;
  /** The timeline (a replay of the whole session, leaving checkpoints). */
  timeline_ms: number;
  /** Pages of turns not asked for before, after the timeline (from its checkpoints). */
  after_timeline_ms: Record<string, number>;
}

/** The session of `benchPackAssembly`: 16k budget, every tenth prompt asks about an old turn. */
async function recordSession(dir: string, turns: number): Promise<number> {
  const start = performance.now();
  const session = await Session.open({ dir, budget: 16_000, keepRecent: 8 });
  await session.append({ role: 'system', content: 'You are a careful coding agent.' });
  for (const [i, turn] of syntheticSession({ turns }).entries()) {
    const prompt =
      i % 10 === 9 && i > 40 ? `${turn.prompt} What did marker${i - 37} show?` : turn.prompt;
    await session.beforeTurn(prompt);
    await session.afterTurn(turn.response);
  }
  await session.close();
  return performance.now() - start;
}

const ms = (t: number): number => Math.round(performance.now() - t);

/**
 * The inspector's pack page on a recorded session of `turns` turns (default 1,000), through the
 * real server (`contextfold inspect` spawned): turns 1, 500 and the last as the first request of
 * a fresh process each (a replay from the start), the same again in one process, the next
 * turn, the timeline, then two turns never asked for. Measurements, never assertions.
 *
 * @example
 * const r = await benchInspectPack('/tmp/bench/pack', 1000);
 */
export async function benchInspectPack(work: string, turns = 1000): Promise<InspectPackBench> {
  const dir = join(work, '.contextfold');
  const recordMs = await recordSession(dir, turns);
  const picked = [1, Math.floor(turns / 2), turns - 1];
  const page = (url: string, turn: number) => getJson(`${url}api/pack?store=.&turn=${turn}`);
  const first: Record<string, number> = {};
  for (const turn of picked) {
    const { url, child } = await spawnInspector(dir);
    try {
      const t = performance.now();
      await page(url, turn);
      first[turn] = ms(t);
    } finally {
      child.kill('SIGTERM');
    }
  }
  const { url, child } = await spawnInspector(dir);
  try {
    for (const turn of picked) await page(url, turn);
    const again: Record<string, number> = {};
    for (const turn of picked) {
      const t = performance.now();
      await page(url, turn);
      again[turn] = ms(t);
    }
    let t = performance.now();
    await page(url, picked[1]! + 1);
    const next = ms(t);
    t = performance.now();
    await getJson(`${url}api/timeline?store=.`);
    const timeline = ms(t);
    const after: Record<string, number> = {};
    for (const turn of [Math.floor(turns / 4), Math.floor((turns * 3) / 4)]) {
      t = performance.now();
      await page(url, turn);
      after[turn] = ms(t);
    }
    return {
      turns,
      events_bytes: statSync(eventsPath(dir)).size,
      record_ms: Math.round(recordMs),
      first_request_ms: first,
      again_ms: again,
      next_turn_ms: next,
      timeline_ms: timeline,
      after_timeline_ms: after,
    };
  } finally {
    child.kill('SIGTERM');
  }
}
