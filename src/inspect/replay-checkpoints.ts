import type { ReplayCheckpoint } from '../harness/replay.js';

/** Checkpoints kept on the grid at most: when one more would be kept, the spacing doubles. */
export const GRID_MAX = 28;
/** Checkpoints kept right before a requested turn at most (the most recently used). */
export const RECENT_MAX = 4;
/** The grid's first spacing, in turns. */
const FIRST_SPACING = 8;

/**
 * The replay checkpoints the inspector keeps for one session, so a pack is rebuilt from the
 * nearest turn boundary before it rather than from the start. Bounded: at most
 * `GRID_MAX + RECENT_MAX` (32) checkpoints, each a copy of the session state's lists (the
 * messages and records in them are shared): one every `spacing` turns (8, doubled whenever
 * more than 28 would be kept), and the boundaries right before the 4 turns last asked for
 * (paging through a session one turn at a time replays one turn). All are dropped when the log
 * changes other than by growing (a new generation of {@link SessionLogReader}).
 */
export class ReplayCheckpoints {
  private generation = -1;
  private spacing = FIRST_SPACING;
  private readonly grid = new Map<number, ReplayCheckpoint>();
  /** Least recently used first. */
  private recent: ReplayCheckpoint[] = [];

  /** Forgets the checkpoints of an older generation of the log than `generation`. */
  private use(generation: number): void {
    if (generation <= this.generation) return;
    this.generation = generation;
    this.spacing = FIRST_SPACING;
    this.grid.clear();
    this.recent = [];
  }

  /** The latest checkpoint a replay up to `turn` can go on from (none: from the start). */
  before(generation: number, turn: number): ReplayCheckpoint | undefined {
    this.use(generation);
    if (generation !== this.generation) return undefined;
    let best: ReplayCheckpoint | undefined;
    for (const c of [...this.grid.values(), ...this.recent]) {
      if (c.turns <= turn && (!best || c.turns > best.turns)) best = c;
    }
    const i = best ? this.recent.indexOf(best) : -1;
    if (i >= 0) this.recent.push(...this.recent.splice(i, 1));
    return best;
  }

  /**
   * The `checkpoint` option of a replay on this generation of the log: keeps the boundaries on
   * the grid and, with `wanted`, the one right before that turn.
   */
  offer(
    generation: number,
    wanted?: number,
  ): (turns: number, take: () => ReplayCheckpoint) => void {
    this.use(generation);
    return (turns, takeNew) => {
      if (generation !== this.generation) return;
      let taken: ReplayCheckpoint | undefined;
      const take = (): ReplayCheckpoint => (taken ??= takeNew());
      if (turns === wanted) {
        this.recent = this.recent.filter((c) => c.turns !== turns);
        this.recent.push(take());
        if (this.recent.length > RECENT_MAX) this.recent.shift();
      }
      if (turns % this.spacing !== 0) return;
      if (!this.grid.has(turns) && this.grid.size >= GRID_MAX) {
        this.spacing *= 2;
        for (const k of [...this.grid.keys()]) if (k % this.spacing !== 0) this.grid.delete(k);
        if (turns % this.spacing !== 0) return;
      }
      this.grid.set(turns, take());
    };
  }

  /** How many checkpoints are kept (for tests). */
  get size(): number {
    return this.grid.size + this.recent.length;
  }
}
