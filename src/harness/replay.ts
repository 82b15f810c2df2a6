import { ContextFold } from '../engine/context-fold.js';
import type { ContextFoldEngine, Tokenizer } from '../engine/types.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import { groupBy } from '../protocol/group-by.js';
import { IntegrityCheckError, NodeNotFoundError } from '../protocol/ipcf-errors.js';
import type { PageInFailure } from '../protocol/results.js';
import type { IndexEntry } from '../protocol/types.js';
import { isPgUrl, shownStore } from '../store/pg/pg-url.js';
import type { FoldRef } from './folded-step.js';
import type { ContextPack } from './pack.js';
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
  };

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
  mismatch: ReplayMismatch | null;
}

type FoldEvent = Extract<SessionEvent, { type: 'fold' }>;
type PageEvent = Extract<SessionEvent, { type: 'page_in' }>;
type FailEvent = Extract<SessionEvent, { type: 'page_failed' }>;

/** Answers the session's outside calls from the recorded events, re-verified against the store. */
class ReplayIO implements SessionIO {
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
      const h = await this.engine
        .hydrate(p.step_id, p.window ? { window: p.window } : { maxTokens: p.cap, chunk: p.chunk })
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
  events: SessionEvent[];
  path: string;
}

/** The recorded events: through the engine, from the database, or from `events.jsonl`. */
async function recordedEvents(dir: string, engine?: ContextFoldEngine): Promise<RecordedLog> {
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
 * re-verifying every page against the store. Read-only. `matches` says whether every
 * decision and every pack hash came out identical.
 *
 * @example
 * const r = await replaySession({ dir: '.contextfold' });
 * if (!r.matches) console.error(r.mismatch);
 */
export async function replaySession(options: ReplayOptions): Promise<ReplayResult> {
  const dir = options.engine?.dir ?? options.dir;
  if (typeof dir !== 'string' || dir === '') {
    throw new UsageError('replaySession needs { dir } (the store directory) or { engine }');
  }
  const log = await recordedEvents(dir, options.engine);
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
    const core = new SessionCore(
      io,
      new TokenMeter(engine.tokenizer),
      options.clock ?? (() => new Date()),
      true,
    );
    const { packs, replayed, consumed } = await replayEvents(core, recorded, options, at);
    const mismatch = firstMismatch(recorded.slice(0, consumed), replayed);
    return { packs, events: replayed, matches: mismatch === null, mismatch };
  } finally {
    if (!options.engine) await (engine as ContextFold).close({ compact: false });
  }
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
 * Feeds the recorded inputs to `core` in order (appends, pins, turns), up to the turn asked
 * for with `atStep` / `atTurn`. Returns the packs, the events the replay produced and how many
 * recorded events they are compared with.
 */
async function replayEvents(
  core: SessionCore,
  recorded: readonly SessionEvent[],
  options: ReplayOptions,
  at: (e: SessionEvent, err: unknown) => unknown,
): Promise<{ packs: ContextPack[]; replayed: SessionEvent[]; consumed: number }> {
  const packs: ContextPack[] = [];
  const replayed: SessionEvent[] = [];
  let consumed = recorded.length;
  for (const e of recorded) {
    if (e.type === 'session_opened' || e.type === 'append' || e.type === 'pin') {
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
        replayed.push(...core.drain());
        consumed = replayed.length;
        break;
      }
    } else if (e.type === 'turn_completed') {
      await core.completeTurn();
    }
    replayed.push(...core.drain());
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
  return { packs, replayed, consumed };
}

function firstMismatch(a: SessionEvent[], b: SessionEvent[]): ReplayMismatch | null {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i] ? comparableEvent(a[i]!) : null;
    const y = b[i] ? comparableEvent(b[i]!) : null;
    if (x !== y) return { index: i, recorded: x, replayed: y };
  }
  return null;
}
