import { ContextFold } from '../engine/context-fold.js';
import type { ContextFoldEngine, Tokenizer } from '../engine/types.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import { groupBy } from '../protocol/group-by.js';
import { IntegrityCheckError, NodeNotFoundError } from '../protocol/ipcf-errors.js';
import { type AllKeys, checkOptionKeys } from '../protocol/option-keys.js';
import type { PageInFailure } from '../protocol/results.js';
import type { IndexEntry } from '../protocol/types.js';
import { isPgUrl, shownStore } from '../store/pg/pg-url.js';
import type { FoldRef } from './folded-step.js';
import type { ContextPack } from './pack.js';
import { ReplayPages } from './replay-pages.js';
import { type FoldRequest, type PagedIn, SessionCore, type SessionIO } from './session-core.js';
import {
  comparableEvent,
  errorAtLine,
  eventsPath,
  loadEventLog,
  readEvents,
  type SessionEvent,
} from './session-events.js';
import { defaultSummary } from './session-options.js';
import type { SessionState } from './session-state.js';
import { TokenMeter } from './token-meter.js';
import type { Turn } from './turns.js';

/** Where {@link replaySession} reads the session from: a store, or an engine already open on it. */
export type ReplaySource =
  | {
      /** The store directory (or PostgreSQL URL) holding the session's events. */
      dir: string;
      engine?: undefined;
    }
  | {
      /** Read the store through this engine (it is not closed). */
      engine: ContextFoldEngine;
      dir?: undefined;
    };

/** Where {@link replaySession} stops: at a prompt's step, at a turn, or (neither) at the end. */
export type ReplayStop =
  | {
      /** Stop after building the pack whose prompt is at this history position. */
      atStep?: number;
      atTurn?: undefined;
    }
  | {
      /** Stop after building the pack of this turn (0-based; unique, unlike a prompt's step). */
      atTurn?: number;
      atStep?: undefined;
    };

/** Options of {@link replaySession}: a {@link ReplaySource}, a {@link ReplayStop}, and these. */
export type ReplayOptions = ReplaySource &
  ReplayStop & {
    /** The tokenizer the session used, when it was not `o200k` or `reference`. */
    tokenizer?: Tokenizer;
    /** Clock for the replayed events' `recorded_at` (never compared, never in a pack). */
    clock?: () => Date;
    /** Called with each pack as it is rebuilt (e.g. to keep a summary of a long session). */
    onPack?: (pack: ContextPack) => void;
    /** Keep every pack in the result. Default true; false keeps only the last (bounded memory). */
    keepPacks?: boolean;
    /**
     * The recorded log, already read (`loadEventLog`; event `i` is line `i + 1` of `path`), for a
     * caller that keeps it between replays. Default: read from the store.
     */
    log?: { events: readonly SessionEvent[]; path: string };
    /**
     * Go on from this checkpoint instead of the start. Used only when it fits: taken on this
     * store and tokenizer, from the same first events of this log (the same objects, or equal
     * ones), the store's index still holds the entries the turns before it folded and paged
     * in, the log's later events add nothing to those turns, and the stop is `atTurn` at or
     * after its turn, or none (not `atStep`). Otherwise the replay starts from the start
     * (`resumed: null`), with the same result as without it.
     */
    from?: ReplayCheckpoint;
    /**
     * Called at each turn boundary (after a recorded `turn_completed`) the replay passes while
     * every event it produced matches the recorded one, with the number of turns replayed:
     * `take()` returns a checkpoint there (a copy of the state; take only what you keep).
     */
    checkpoint?: (turns: number, take: () => ReplayCheckpoint) => void;
  };

/** Every option {@link replaySession} takes (the compiler keeps this list complete). */
const REPLAY_OPTION_KEYS: Record<AllKeys<ReplayOptions>, true> = {
  dir: true,
  engine: true,
  atStep: true,
  atTurn: true,
  tokenizer: true,
  clock: true,
  onPack: true,
  keepPacks: true,
  log: true,
  from: true,
  checkpoint: true,
};

/**
 * A replay's state at a turn boundary, to go on from with {@link ReplayOptions.from} rather than
 * replay the turns before it again. Reusable in this process (not serialisable); never changes.
 * What a resumed replay does not redo is re-verifying the pages of the turns before the
 * checkpoint against the node files (their index entries are checked).
 */
export interface ReplayCheckpoint {
  /** Turns replayed in full: a replay resumed here starts with turn `turns`. */
  readonly turns: number;
  /** Recorded events it covers (the log's first lines); a resumed replay reads on after them. */
  readonly events: number;
  /**
   * An estimate of the heap it holds of its own, in bytes (the copied lists of the state),
   * about 0.45 KB per turn. Not counted: what it shares with the replay that took it (that
   * replay's history messages and token counter), held while any of its checkpoints is.
   */
  readonly bytes: number;
}

/** What a checkpoint holds: where it was taken, the log it read, the state and token counts. */
interface Saved {
  turns: number;
  events: number;
  dir: string;
  tokenizer: string;
  recorded: readonly SessionEvent[];
  state: SessionState;
  meter: TokenMeter;
}

/** The checkpoints this module made (one the caller built itself is not one). */
const saved = new WeakMap<ReplayCheckpoint, Saved>();

/** The first difference between the recorded and the replayed events. */
export interface ReplayMismatch {
  index: number;
  recorded: string | null;
  replayed: string | null;
}

/** What {@link replaySession} rebuilt. */
export interface ReplayResult {
  /** Every pack, in turn order (up to `atStep` / `atTurn`; only the last with `keepPacks: false`). */
  packs: ContextPack[];
  /** The events the replay produced (with the replay clock's `recorded_at`). */
  events: SessionEvent[];
  /** True when every replayed event equals the recorded one (ignoring `recorded_at`). */
  matches: boolean;
  /** The first difference; its `index` counts from the log's start, resumed or not. */
  mismatch: ReplayMismatch | null;
  /**
   * The turns of the checkpoint the replay went on from (`from`), or null (from the start).
   * Resumed, `packs` and `events` are those after the checkpoint (those before it matched).
   */
  resumed: number | null;
}

type FoldEvent = Extract<SessionEvent, { type: 'fold' }>;
type PageEvent = Extract<SessionEvent, { type: 'page_in' }>;
type FailEvent = Extract<SessionEvent, { type: 'page_failed' }>;

/** Answers the session's outside calls from the recorded events, re-verified against the store. */
class ReplayIO implements SessionIO {
  /** Each distinct page is read and verified once per replay (see {@link ReplayPages}). */
  private readonly hydrated = new ReplayPages();

  constructor(
    private readonly engine: ContextFoldEngine,
    private readonly entries: Map<number, IndexEntry>,
    private readonly folds: Map<number, FoldEvent>,
    private readonly pages: Map<number, PageEvent[]>,
    private readonly failures: Map<number, FailEvent[]>,
    /** Names the log line of a recorded event in an error. */
    private readonly at: (e: SessionEvent, err: unknown) => unknown,
  ) {}

  async summarize(turn: Turn): Promise<{ summary: string; source: 'default' | 'custom' }> {
    const recorded = this.folds.get(turn.stepId);
    if (recorded?.summary_source === 'custom') {
      return { summary: recorded.record.summary, source: 'custom' };
    }
    return { summary: defaultSummary(turn), source: 'default' };
  }

  async fold(requests: FoldRequest[]): Promise<FoldRef[]> {
    return requests.map((r) => {
      const step = r.turn.stepId;
      const entry = this.entries.get(step);
      if (!entry) {
        throw new NodeNotFoundError(
          `replay: the policy folds step ${step} but the store has no cold node for it (${this.engine.dir})`,
          { stepId: step },
        );
      }
      const expected = sha256Hex(r.payload === '' ? r.summary : r.payload);
      if (entry.payload_sha256 !== expected) {
        throw new IntegrityCheckError(
          `replay: step ${step} in the store holds another payload than the history (${entry.payload_sha256.slice(0, 12)}… vs ${expected.slice(0, 12)}…)`,
          { stepId: step, path: entry.file_path },
        );
      }
      return { step_id: step, file_path: entry.file_path, payload_sha256: entry.payload_sha256 };
    });
  }

  async pageIn(
    _prompt: string,
    turn: number,
  ): Promise<{ pages: PagedIn[]; failures: PageInFailure[] }> {
    const pages: PagedIn[] = [];
    for (const p of this.pages.get(turn) ?? []) {
      const h = await this.hydrated
        .hydrate(
          p.step_id,
          p.window ? { window: p.window } : { maxTokens: p.cap, chunk: p.chunk },
          (step, options) => this.engine.hydrate(step, options),
        )
        .catch((err: unknown) => {
          throw this.at(p, err);
        });
      if (h.payload_sha256 !== p.payload_sha256 || sha256Hex(h.content) !== p.content_sha256) {
        throw this.at(
          p,
          new IntegrityCheckError(
            `replay: step ${p.step_id} now pages in other bytes than it did in turn ${turn}`,
            { stepId: p.step_id },
          ),
        );
      }
      pages.push({
        step_id: p.step_id,
        payload_sha256: h.payload_sha256,
        chunk: h.chunk,
        chunks: h.chunks,
        truncated: h.truncated,
        content: h.content,
        matched_terms: [...p.matched_terms],
        cap: p.cap,
        ...(p.window ? { window: { ...p.window } } : {}),
        tokens: h.tokens,
        content_sha256: p.content_sha256,
        findings: h.findings,
      });
    }
    const failures = (this.failures.get(turn) ?? []).map((f) => ({
      step_id: f.step_id,
      code: f.code,
      error: f.error,
      message: f.message,
    }));
    return { pages, failures };
  }

  async evict(): Promise<void> {
    // Replay never writes: the eviction is already in the store's log.
  }
}

const group = <E extends { turn: number }>(events: E[]) => groupBy(events, (e) => e.turn);

/** A recorded log: its events (event `i` is line `i + 1`) and where it is read from. */
interface RecordedLog {
  events: readonly SessionEvent[];
  path: string;
}

/** The recorded events: given, through the engine, from the database, or from `events.jsonl`. */
async function recordedEvents(
  dir: string,
  engine?: ContextFoldEngine,
  given?: RecordedLog,
): Promise<RecordedLog> {
  if (given) return given;
  if (engine) return loadEventLog(engine);
  if (!isPgUrl(dir)) return { events: readEvents(dir), path: eventsPath(dir) };
  const reader = await ContextFold.open({ store: dir, tokenizer: 'reference', readOnly: true });
  try {
    return await loadEventLog(reader);
  } finally {
    await reader.close();
  }
}

/** Names the log line of a recorded event in an error met replaying it ({@link errorAtLine}). */
function lineLocator(log: RecordedLog): (e: SessionEvent, err: unknown) => unknown {
  const lines = new Map(log.events.map((e, i) => [e, i + 1]));
  return (e, err) => {
    const line = lines.get(e);
    return line === undefined ? err : errorAtLine(err, log.path, line);
  };
}

/**
 * Rebuilds a session from its store: the history, the recorded inputs (pins, page-in picks,
 * custom summaries) and the policy, re-running every decision with another clock and
 * re-verifying every page against the store (a page paged in again with the same window, cap
 * and chunk: once per replay, see {@link ReplayPages}). Read-only. `matches` says whether every
 * decision and every pack hash came out identical.
 *
 * @example
 * const r = await replaySession({ dir: '.contextfold' });
 * if (!r.matches) console.error(r.mismatch);
 */
export async function replaySession(options: ReplayOptions): Promise<ReplayResult> {
  checkOptionKeys('replaySession', options ?? {}, REPLAY_OPTION_KEYS);
  const dir = options.engine?.dir ?? options.dir;
  if (typeof dir !== 'string' || dir === '') {
    throw new UsageError('replaySession needs { dir } (the store directory) or { engine }');
  }
  const log = await recordedEvents(dir, options.engine, options.log);
  const recorded = log.events;
  const at = lineLocator(log);
  const engine = await replayEngine(dir, log, options);
  try {
    const entries = new Map((await engine.entries()).map((e) => [e.step_id, e]));
    const folds = new Map<number, FoldEvent>();
    for (const e of recorded) if (e.type === 'fold') folds.set(e.step_id, e);
    const io = new ReplayIO(
      engine,
      entries,
      folds,
      group(recorded.filter((e): e is PageEvent => e.type === 'page_in')),
      group(recorded.filter((e): e is FailEvent => e.type === 'page_failed')),
      at,
    );
    // Scanning tool output is harmless here: replay answers every scan with what the live
    // session recorded for that turn (nothing when it did not scan).
    const from = resumable(options, dir, engine, recorded, entries);
    const core = new SessionCore(
      io,
      from && from.meter.tokenizer === engine.tokenizer
        ? from.meter
        : new TokenMeter(engine.tokenizer),
      options.clock ?? (() => new Date()),
      true,
      from?.state.snapshot(),
    );
    const take = (events: number): ReplayCheckpoint => {
      const state = core.state.snapshot();
      const cp: ReplayCheckpoint = Object.freeze({
        turns: core.state.turnCount,
        events,
        bytes: state.snapshotBytes(),
      });
      saved.set(cp, {
        turns: cp.turns,
        events,
        dir,
        tokenizer: engine.tokenizer.name,
        recorded,
        state,
        meter: core.meter,
      });
      return cp;
    };
    const { packs, replayed, mismatch } = await replayEvents(
      core,
      recorded,
      options,
      at,
      from?.events ?? 0,
      take,
    );
    return {
      packs,
      events: replayed,
      matches: mismatch === null,
      mismatch,
      resumed: from ? from.turns : null,
    };
  } finally {
    if (!options.engine) await (engine as ContextFold).close({ compact: false });
  }
}

/**
 * The checkpoint of `options.from` if a replay may go on from it, giving what a replay from the
 * start would (see {@link ReplayOptions.from}); else null.
 */
function resumable(
  options: ReplayOptions,
  dir: string,
  engine: ContextFoldEngine,
  recorded: readonly SessionEvent[],
  entries: ReadonlyMap<number, IndexEntry>,
): Saved | null {
  const cp = options.from ? saved.get(options.from) : undefined;
  if (!cp || options.atStep !== undefined) return null;
  if (options.atTurn !== undefined && options.atTurn < cp.turns) return null;
  if (cp.dir !== dir || cp.tokenizer !== engine.tokenizer.name) return null;
  if (recorded.length < cp.events) return null;
  for (let i = 0; i < cp.events; i++) {
    const a = recorded[i]!;
    const b = cp.recorded[i]!;
    if (a !== b && comparableEvent(a) !== comparableEvent(b)) return null;
  }
  // Replay looks a turn's pages, failures and custom summaries up in the whole log.
  for (let i = cp.events; i < recorded.length; i++) {
    const e = recorded[i]!;
    if ((e.type === 'page_in' || e.type === 'page_failed') && e.turn < cp.turns) return null;
    if (e.type === 'fold' && cp.state.folded.has(e.step_id)) return null;
  }
  // The index as the turns before it found it: each folded node, each paged node.
  for (const [step, sha] of cp.state.foldedPayload) {
    const e = entries.get(step);
    if (e?.payload_sha256 !== sha) return null;
    if (e.file_path !== cp.state.folded.get(step)?.artifacts.cold_node_ref) return null;
  }
  for (let i = 0; i < cp.events; i++) {
    const e = recorded[i]!;
    if (e.type === 'page_in' && entries.get(e.step_id)?.payload_sha256 !== e.payload_sha256) {
      return null;
    }
  }
  return cp;
}

/**
 * The engine a replay reads with: the caller's, or one opened on `dir` with the tokenizer the
 * session recorded (a custom tokenizer must be passed). A mismatch is a `UsageError`.
 */
async function replayEngine(
  dir: string,
  log: RecordedLog,
  options: ReplayOptions,
): Promise<ContextFoldEngine> {
  const opened = log.events[0];
  if (opened === undefined) {
    throw new UsageError(
      `no session recorded in ${shownStore(dir)} (no events.jsonl): run a session first`,
    );
  }
  if (opened.type !== 'session_opened') {
    throw new IntegrityCheckError(
      `${log.path} line 1: the session log opens with a '${opened.type}' event, not session_opened (its config)`,
      { path: log.path, line: 1 },
    );
  }
  const name = opened.config.tokenizer;
  if (options.tokenizer && options.tokenizer.name !== name) {
    throw new UsageError(
      `the session used the '${name}' tokenizer, not '${options.tokenizer.name}'`,
    );
  }
  if (!options.engine && !options.tokenizer && name !== 'o200k' && name !== 'reference') {
    throw new UsageError(`the session used a custom tokenizer '${name}': pass it as { tokenizer }`);
  }
  // Read-only: a replay (and `contextfold pack`) writes nothing, not even the derived index.
  const engine =
    options.engine ??
    (await ContextFold.open({
      dir,
      tokenizer: options.tokenizer ?? (name as 'o200k' | 'reference'),
      readOnly: true,
    }));
  if (engine.tokenizer.name !== name) {
    if (!options.engine) await (engine as ContextFold).close({ compact: false });
    throw new UsageError(
      `the session used the '${name}' tokenizer but the engine counts with '${engine.tokenizer.name}'`,
    );
  }
  return engine;
}

/**
 * Feeds the recorded inputs to `core` in order (appends, pins, turns) from recorded event
 * `start` (0, or a checkpoint's), up to the turn asked for with `atStep` / `atTurn`, comparing
 * each event produced with the recorded one at its place. Returns the packs, the events
 * produced and the first mismatch; offers a checkpoint at each turn boundary while all matched.
 */
async function replayEvents(
  core: SessionCore,
  recorded: readonly SessionEvent[],
  options: ReplayOptions,
  at: (e: SessionEvent, err: unknown) => unknown,
  start: number,
  take: (events: number) => ReplayCheckpoint,
): Promise<{ packs: ContextPack[]; replayed: SessionEvent[]; mismatch: ReplayMismatch | null }> {
  const packs: ContextPack[] = [];
  const replayed: SessionEvent[] = [];
  let mismatch: ReplayMismatch | null = null;
  /** Adds what the core recorded since, each compared with the recorded event at its place. */
  const drain = (): void => {
    for (const e of core.drain()) {
      const index = start + replayed.length;
      replayed.push(e);
      if (mismatch !== null) continue;
      const x = recorded[index] ? comparableEvent(recorded[index]!) : null;
      const y = comparableEvent(e);
      if (x !== y) mismatch = { index, recorded: x, replayed: y };
    }
  };
  let stopped = false;
  for (let i = start; i < recorded.length; i++) {
    const e = recorded[i]!;
    if (
      e.type === 'session_opened' ||
      e.type === 'append' ||
      e.type === 'pin' ||
      e.type === 'system_changed'
    ) {
      const { recorded_at: _r, ...input } = e;
      try {
        core.record(input as never);
      } catch (err) {
        throw at(e, err);
      }
    } else if (e.type === 'turn_started') {
      const pack = await core.startTurn(e.prompt_step).catch((err: unknown) => {
        throw at(e, err);
      });
      if (options.keepPacks === false) packs.length = 0;
      packs.push(pack);
      options.onPack?.(pack);
      if (
        (options.atStep !== undefined && pack.step_id === options.atStep) ||
        (options.atTurn !== undefined && pack.turn === options.atTurn)
      ) {
        drain();
        stopped = true;
        break;
      }
    } else if (e.type === 'turn_completed') {
      await core.completeTurn();
      drain();
      if (options.checkpoint && mismatch === null && start + replayed.length === i + 1) {
        options.checkpoint(core.state.turnCount, () => take(i + 1));
      }
      continue;
    }
    drain();
  }
  // Run to the end, the recorded events past the replayed ones are a difference too.
  const total = start + replayed.length;
  if (!stopped && mismatch === null && recorded.length > total) {
    mismatch = { index: total, recorded: comparableEvent(recorded[total]!), replayed: null };
  }
  if (options.atStep !== undefined && packs[packs.length - 1]?.step_id !== options.atStep) {
    const steps = packs.map((p) => p.step_id);
    throw new UsageError(
      `no turn of this session has its prompt at step ${options.atStep}; prompts are at steps ${steps.slice(0, 20).join(', ')}${steps.length > 20 ? ', …' : ''}`,
    );
  }
  if (options.atTurn !== undefined && packs[packs.length - 1]?.turn !== options.atTurn) {
    throw new UsageError(
      `this session has no turn ${options.atTurn}; its turns are 0..${core.state.turnCount - 1}`,
    );
  }
  return { packs, replayed, mismatch };
}
