import type { ReplayCheckpoint } from '../harness/replay.js';

/** Checkpoints kept on the grid at most: when one more would be kept, the spacing doubles. */
export const GRID_MAX = 28;
/** Checkpoints kept right before a requested turn at most (the most recently used). */
export const RECENT_MAX = 4;
/** Bytes of checkpoints an inspector process keeps at most, across its sessions (estimated). */
export const BYTES_MAX = 64 * 1024 * 1024;
/** The grid's first spacing, in turns. */
const FIRST_SPACING = 8;

/**
 * The bytes of replay checkpoints shared by every {@link ReplayCheckpoints} of a process, by
 * their estimate ({@link ReplayCheckpoint.bytes}): when a new one would take more than `max`,
 * the least recently used ones (taken or gone on from), of any session, are dropped first.
 */
export class CheckpointBudget {
  /** Estimated bytes kept now. */
  total = 0;
  private tick = 0;
  private readonly sets = new Set<ReplayCheckpoints>();

  constructor(readonly max: number = BYTES_MAX) {}

  /** The next use stamp. */
  stamp(): number {
    return ++this.tick;
  }

  /** Counts `cp` in, then drops the least recently used checkpoints until all fit. */
  add(set: ReplayCheckpoints, cp: ReplayCheckpoint): void {
    this.sets.add(set);
    this.total += cp.bytes;
    while (this.total > this.max) {
      let oldest: { set: ReplayCheckpoints; cp: ReplayCheckpoint; used: number } | undefined;
      for (const s of this.sets) {
        const o = s.leastUsed();
        if (o && (!oldest || o.used < oldest.used)) oldest = { set: s, ...o };
      }
      if (!oldest) return;
      oldest.set.drop(oldest.cp);
    }
  }

  /** Counts `cp` out. */
  remove(set: ReplayCheckpoints, cp: ReplayCheckpoint, empty: boolean): void {
    this.total -= cp.bytes;
    if (empty) this.sets.delete(set);
  }
}

/** The budget every inspector view of this process shares by default. */
const processBudget = new CheckpointBudget();

/**
 * The replay checkpoints the inspector keeps for one session, so a pack is rebuilt from the
 * nearest turn boundary before it rather than from the start. Bounded: at most
 * `GRID_MAX + RECENT_MAX` (32) checkpoints, each a copy of the session state's lists (the
 * messages and records in them are shared): one every `spacing` turns (8, doubled whenever
 * more than 28 would be kept), and the boundaries right before the 4 turns last asked for
 * (paging through a session one turn at a time replays one turn); and by bytes, with every
 * other session of the process ({@link CheckpointBudget}, 64 MB). All are dropped when the log
 * changes other than by growing (a new generation of {@link SessionLogReader}).
 */
export class ReplayCheckpoints {
  private generation = -1;
  private spacing = FIRST_SPACING;
  private readonly grid = new Map<number, ReplayCheckpoint>();
  /** Least recently used first. */
  private recent: ReplayCheckpoint[] = [];
  /** When each kept checkpoint was last taken or gone on from (the budget's stamps). */
  private readonly used = new Map<ReplayCheckpoint, number>();

  constructor(private readonly budget: CheckpointBudget = processBudget) {}

  /** Forgets the checkpoints of an older generation of the log than `generation`. */
  private use(generation: number): void {
    if (generation <= this.generation) return;
    this.generation = generation;
    this.clear();
  }

  /** Forgets every checkpoint (the view is closed, or the log is another). */
  clear(): void {
    this.spacing = FIRST_SPACING;
    for (const cp of [...this.used.keys()]) this.drop(cp);
  }

  /** The least recently used checkpoint kept, for the budget. */
  leastUsed(): { cp: ReplayCheckpoint; used: number } | undefined {
    let out: { cp: ReplayCheckpoint; used: number } | undefined;
    for (const [cp, used] of this.used) if (!out || used < out.used) out = { cp, used };
    return out;
  }

  /** Forgets one checkpoint, wherever it is kept. */
  drop(cp: ReplayCheckpoint): void {
    if (!this.used.delete(cp)) return;
    if (this.grid.get(cp.turns) === cp) this.grid.delete(cp.turns);
    this.recent = this.recent.filter((c) => c !== cp);
    this.budget.remove(this, cp, this.used.size === 0);
  }

  /** Keeps `cp` (already placed in the grid or the recent list) under the budget. */
  private keep(cp: ReplayCheckpoint): void {
    const known = this.used.has(cp);
    this.used.set(cp, this.budget.stamp());
    if (!known) this.budget.add(this, cp);
  }

  /** Forgets `cp` unless it is still in the grid or the recent list. */
  private release(cp: ReplayCheckpoint | undefined): void {
    if (!cp || this.grid.get(cp.turns) === cp || this.recent.includes(cp)) return;
    this.drop(cp);
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
    if (best) this.used.set(best, this.budget.stamp());
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
        const old = this.recent.filter((c) => c.turns === turns);
        this.recent = this.recent.filter((c) => c.turns !== turns);
        this.recent.push(take());
        const out = this.recent.length > RECENT_MAX ? this.recent.shift() : undefined;
        for (const c of [...old, out]) this.release(c);
        this.keep(take());
      }
      if (turns % this.spacing !== 0) return;
      if (!this.grid.has(turns) && this.grid.size >= GRID_MAX) {
        this.spacing *= 2;
        for (const [k, c] of [...this.grid]) {
          if (k % this.spacing === 0) continue;
          this.grid.delete(k);
          this.release(c);
        }
        if (turns % this.spacing !== 0) return;
      }
      const old = this.grid.get(turns);
      this.grid.set(turns, take());
      if (old !== take()) this.release(old);
      this.keep(take());
    };
  }

  /** How many checkpoints are kept (for tests). */
  get size(): number {
    return this.grid.size + this.recent.length;
  }
}
