import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ContextFold } from '../engine/context-fold.js';
import type { RetrievalMode, ScanPick } from '../engine/types.js';
import type { ContextPack } from '../harness/pack.js';
import { type ReplayCheckpoint, replaySession } from '../harness/replay.js';
import { eventsPath } from '../harness/session-events.js';
import { UsageError } from '../protocol/errors.js';
import { perTurnCap } from '../protocol/policy.js';
import { headFilePath } from '../store/records-head.js';
import type {
  DiskResponse,
  LayerTokens,
  NodeResponse,
  NodesResponse,
  OverviewResponse,
  PackResponse,
  PayloadResponse,
  RecallResponse,
  ScanResponse,
  StoreInfo,
  TimelineResponse,
  ValidateResponse,
} from './api-types.js';
import { packView } from './pack-view.js';
import { payloadLines } from './payload-text.js';
import { ReplayCheckpoints } from './replay-checkpoints.js';
import { type ReadLog, SessionLogReader } from './session-log.js';
import { layerTokens, timelineRows } from './timeline.js';

/** Engine choices the inspector passes through (never anything that writes). */
export interface ViewOptions {
  tokenizer?: 'o200k' | 'reference';
  retrieval?: RetrievalMode;
  /** Problems of a validate run sent at most (all are counted). Default 1,000. */
  maxProblems?: number;
  /** Told each engine warning the first time it is seen (the CLI prints it on stderr). */
  onWarning?: (message: string) => void;
}

/** Distinct warnings a view keeps for its overview at most (the oldest are kept). */
const WARNINGS_MAX = 100;

/** What of a payload the drawer shows at most (the rest is counted, not sent). */
const PAYLOAD_MAX_LINES = 5000;
const PAYLOAD_MAX_BYTES = 2 * 1024 * 1024;
const PAYLOAD_MAX_SEGMENTS = 50_000;
/** Terms of each kind the drawer shows at most (the rest is counted, not sent). */
const TERMS_MAX = 300;
/** Characters of a summary in a list row (the node drawer has it whole). */
const LIST_SUMMARY_MAX = 2000;

/** A summary for a list row: whole, or its start and how many characters are left out. */
function listSummary(s: string): string {
  if (s.length <= LIST_SUMMARY_MAX) return s;
  const cut = /[\ud800-\udbff]/.test(s[LIST_SUMMARY_MAX - 1]!)
    ? LIST_SUMMARY_MAX - 1
    : LIST_SUMMARY_MAX;
  return `${s.slice(0, cut)} … (${s.length - cut} more characters: open the node)`;
}

/**
 * A page's offset, past the end moved back to the last page (a link or a hand-edited URL with
 * an old or too large offset shows that page, not an empty one numbered "501–500 of 1").
 */
function lastPageAt(offset: number, total: number, limit: number): number {
  if (offset < total || total === 0) return offset < total ? offset : 0;
  return Math.floor((total - 1) / limit) * limit;
}

interface TimelineCache {
  key: string;
  response: Omit<TimelineResponse, 'offset' | 'rows'>;
  rows: TimelineResponse['rows'];
  /** The log generation replayed, and the turns of it replayed to a matching turn boundary. */
  generation: number;
  boundary: number;
  /** Tokens by layer of each pack the replay built. */
  layers: ReadonlyMap<number, LayerTokens>;
}

function fileSize(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}

/** The tokenizer a recorded session used, from its first event (without parsing the whole log). */
function recordedTokenizer(dir: string): string | null {
  let fd: number;
  try {
    fd = openSync(eventsPath(dir), 'r');
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const line = buf.subarray(0, n).toString('utf8').split('\n')[0] ?? '';
    const e = JSON.parse(line) as { type?: string; config?: { tokenizer?: unknown } };
    return e.type === 'session_opened' && typeof e.config?.tokenizer === 'string'
      ? e.config.tokenizer
      : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

const pickView = (p: ScanPick & Record<string, unknown>) => ({
  step_id: p.step_id,
  cost: p.cost,
  matched_terms: [...p.matched_terms],
  status: typeof p.status === 'string' ? p.status : null,
  companion_of: typeof p.companion_of === 'number' ? p.companion_of : null,
  alternative_of: typeof p.alternative_of === 'number' ? p.alternative_of : null,
});

/**
 * One store as the inspector sees it, read-only by construction: the engine is opened
 * `readOnly` (it writes nothing, not even its derived index), never folds, evicts or compacts, and is closed with
 * `compact: false`; the session is rebuilt by replay, which writes nothing. Every answer is a
 * view shape of `api-types.ts`.
 */
export class StoreView {
  readonly info: StoreInfo;
  private readonly options: ViewOptions;
  private opening: Promise<ContextFold> | null = null;
  private closed = false;
  private validating: Promise<ValidateResponse> | null = null;
  private timelineCache: TimelineCache | null = null;
  private readonly warnings = new Set<string>();
  private readonly log: SessionLogReader;
  private readonly checkpoints = new ReplayCheckpoints();

  constructor(info: StoreInfo, options: ViewOptions = {}) {
    this.info = info;
    this.options = options;
    this.log = new SessionLogReader(info.dir);
  }

  private cf(): Promise<ContextFold> {
    this.opening ??= this.open().catch((e: unknown) => {
      this.opening = null; // the next request tries again, and reports the error again
      throw e;
    });
    return this.opening;
  }

  private async open(): Promise<ContextFold> {
    const recorded = recordedTokenizer(this.info.dir);
    const tokenizer =
      this.options.tokenizer ??
      (recorded === 'reference' || recorded === 'o200k' ? recorded : undefined);
    return ContextFold.open({
      dir: this.info.dir,
      readOnly: true,
      onWarning: (w) => this.warn(w.message),
      ...(tokenizer ? { tokenizer } : {}),
      ...(this.options.retrieval ? { retrieval: this.options.retrieval } : {}),
    });
  }

  /** Keeps a warning for the overview and passes it on, each distinct message once. */
  private warn(message: string): void {
    if (this.warnings.has(message) || this.warnings.size >= WARNINGS_MAX) return;
    this.warnings.add(message);
    this.options.onWarning?.(message);
  }

  /**
   * Opens the store on the next turn of the event loop (loading its index), after the caller has
   * printed the URL and launched the browser, so the first page does not wait for all of it. An
   * error is reported by the request that meets it.
   */
  warm(): void {
    setImmediate(() => {
      if (!this.closed) this.cf().catch(() => {});
    });
  }

  /** Counts and settings: no node file is read. */
  async overview(): Promise<OverviewResponse> {
    const cf = await this.cf();
    const s = await cf.status();
    return {
      store: this.info,
      nodes: s.nodes,
      evicted: s.evicted,
      journal_entries: s.journal_entries,
      total_token_estimate: s.total_token_estimate,
      projection_version: s.projection_version,
      tokenizer: s.tokenizer,
      retrieval: s.retrieval,
      per_call_cap: s.policy.max_rehydration_tokens_per_call,
      per_turn_cap: perTurnCap(s.policy),
      policy_hash: s.folding_policy_hash,
      events_bytes: fileSize(eventsPath(this.info.dir)),
      warnings: [...this.warnings],
    };
  }

  /** Bytes on disk (walks the store directory). */
  async disk(): Promise<DiskResponse> {
    const dir = this.info.dir;
    let files = 0;
    let nodeBytes = 0;
    try {
      for (const name of readdirSync(join(dir, 'cold_nodes'))) {
        const size = fileSize(join(dir, 'cold_nodes', name));
        if (size === null) continue;
        files++;
        nodeBytes += size;
      }
    } catch {}
    const index =
      (fileSize(join(dir, 'recall_index.json')) ?? 0) +
      (fileSize(join(dir, 'recall_index.journal')) ?? 0) +
      (fileSize(join(dir, 'eviction_log.json')) ?? 0);
    const events = fileSize(eventsPath(dir)) ?? 0;
    return {
      total_bytes: nodeBytes + index + events,
      cold_node_files: files,
      cold_node_bytes: nodeBytes,
      index_bytes: index,
      events_bytes: events,
    };
  }

  /** One page of the node list, in step order. */
  async nodes(offset: number, limit: number): Promise<NodesResponse> {
    const cf = await this.cf();
    let page = await cf.entriesPage({ offset, limit });
    const at = lastPageAt(offset, page.total, limit);
    if (at !== offset) page = await cf.entriesPage({ offset: at, limit });
    return {
      total: page.total,
      offset: at,
      limit,
      rows: page.entries.map((e) => ({
        step_id: e.step_id,
        summary: listSummary(e.summary),
        token_estimate: e.token_estimate,
        folded_at: e.folded_at,
        evicted: e.evicted,
        files: e.files.length,
        errors: e.errors.length,
      })),
    };
  }

  /**
   * The node drawer: the entry, and hydrate's verdict taken now, hash by hash. The node file's
   * own fields (session, sanitized, status, unknown fields) only when it verifies: a tampered
   * file's claims are not shown as the node's.
   */
  async node(step: number): Promise<NodeResponse> {
    const c = await (await this.cf()).checkNode(step);
    const e = c.entry;
    const file = c.verified ? c.node : null;
    return {
      step_id: c.step_id,
      summary: e.summary,
      token_estimate: e.token_estimate,
      folded_at: e.folded_at,
      evicted: e.evicted,
      file_path: e.file_path,
      path: c.path,
      identifiers: e.identifiers.slice(0, TERMS_MAX),
      files: e.files.slice(0, TERMS_MAX),
      commands: e.commands.slice(0, TERMS_MAX),
      errors: e.errors.slice(0, TERMS_MAX),
      term_counts: {
        identifiers: e.identifiers.length,
        files: e.files.length,
        commands: e.commands.length,
        errors: e.errors.length,
      },
      verified: c.verified,
      problem: c.problem,
      hashes: c.hashes.map((h) => ({ ...h })),
      sanitized: file?.sanitized ?? null,
      session_id: file?.session_id ?? null,
      status: file?.status ?? null,
      encoding: file?.raw_content_encoding ?? null,
      extra: file?.extra ?? {},
    };
  }

  /** The verified payload as numbered lines (refused, with the path, if it does not verify). */
  async payload(step: number): Promise<PayloadResponse> {
    const bytes = await (await this.cf()).hydrateBytes(step);
    const view = payloadLines(bytes, {
      maxLines: PAYLOAD_MAX_LINES,
      maxBytes: PAYLOAD_MAX_BYTES,
      maxSegments: PAYLOAD_MAX_SEGMENTS,
    });
    return { step_id: step, bytes: bytes.length, ...view };
  }

  /** The full integrity scan; one at a time per store (a second request joins the first). */
  validate(): Promise<ValidateResponse> {
    this.validating ??= (async () => {
      try {
        const t = performance.now();
        const v = await (await this.cf()).validate();
        const max = this.options.maxProblems ?? 1000;
        return {
          ok: v.ok,
          checked: v.checked,
          sanitized: v.sanitized,
          problems: v.problems.slice(0, max).map((p) => ({ ...p })),
          problems_total: v.problems.length,
          warnings: v.warnings.map((w) => ({ code: w.code, path: w.path, message: w.message })),
          ms: Math.round(performance.now() - t),
        };
      } finally {
        this.validating = null;
      }
    })();
    return this.validating;
  }

  /** Explicit recall (CONF-04). */
  async recall(query: string, limit: number): Promise<RecallResponse> {
    const r = await (await this.cf()).recall(query);
    return {
      query: r.query,
      total: r.candidates.length,
      candidates: r.candidates
        .slice(0, limit)
        .map((c) => ({ ...c, summary: listSummary(c.summary) })),
    };
  }

  /** What would be paged in for a prompt: the scan only; nothing is hydrated or recorded. */
  async scan(query: string, mode: RetrievalMode | undefined): Promise<ScanResponse> {
    const cf = await this.cf();
    const t = performance.now();
    const r = await cf.scan(query, mode ? { mode } : {});
    return {
      query,
      mode: mode ?? cf.retrieval,
      query_terms: [...r.query_terms],
      selected: r.selected.map((p) => pickView(p as ScanPick & Record<string, unknown>)),
      budget_dropped: r.budget_dropped.map((p) =>
        pickView(p as ScanPick & Record<string, unknown>),
      ),
      ms: Math.round(performance.now() - t),
    };
  }

  /**
   * The session timeline, one row per pack, paged. Replays the session once per log change: a
   * log that only grew goes on from the last replay checkpoint (same rows as a full replay).
   */
  async timeline(offset: number, limit: number): Promise<TimelineResponse> {
    const t = await this.loadTimeline();
    if (!t) {
      return {
        recorded: false,
        turns: 0,
        events: 0,
        budget: null,
        tokenizer: null,
        replay: { ok: false, matches: null, mismatch: null, error: null },
        offset,
        rows: [],
      };
    }
    const at = lastPageAt(offset, t.rows.length, limit);
    return { ...t.response, offset: at, rows: t.rows.slice(at, at + limit) };
  }

  /** Names the session log as it is now (null: none), for the timeline cache. */
  private logKey(): string | null {
    // The log and its head: a head changed or removed alone is read (and refused) again too.
    const path = eventsPath(this.info.dir);
    const keys = [path, headFilePath(path)].map((p) => {
      const st = statSync(p, { throwIfNoEntry: false });
      return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : null;
    });
    return keys.every((k) => k === null) ? null : keys.join('/');
  }

  private async loadTimeline(): Promise<TimelineCache | null> {
    const key = this.logKey();
    if (key === null) return null;
    if (this.timelineCache?.key === key) return this.timelineCache;
    // Read as the pack page reads it: the replay below leaves checkpoints for the pack page.
    const read = this.log.read();
    const recorded = read?.events ?? [];
    const opened = recorded.find((e) => e.type === 'session_opened');
    const config = opened?.type === 'session_opened' ? opened.config : null;
    let run: Awaited<ReturnType<StoreView['timelineReplay']>> | null = null;
    const replay: TimelineResponse['replay'] = {
      ok: false,
      matches: null,
      mismatch: null,
      error: null,
    };
    // A log that grew by whole lines since the last timeline: go on from the last checkpoint
    // at or before the turn boundary that replay reached (the pack page's checkpoints too).
    const prev = this.timelineCache;
    const from =
      read && prev && prev.generation === read.generation && prev.response.replay.ok
        ? this.checkpoints.before(read.generation, prev.boundary)
        : undefined;
    try {
      // An error met after a checkpoint is reported as a replay from the start meets it.
      run = await this.timelineReplay(read, from, prev).catch((e: unknown) => {
        if (!from) throw e;
        return this.timelineReplay(read, undefined, prev);
      });
      const r = run.result;
      replay.ok = true;
      replay.matches = r.matches;
      if (r.mismatch) {
        replay.mismatch = `event ${r.mismatch.index + 1}: recorded ${r.mismatch.recorded?.slice(0, 200) ?? 'nothing'}; rebuilt ${r.mismatch.replayed?.slice(0, 200) ?? 'nothing'}`;
      }
    } catch (e) {
      replay.error = e instanceof Error ? e.message : String(e);
    }
    const layers = run?.layers ?? new Map<number, LayerTokens>();
    const rows = timelineRows(recorded, replay.ok ? layers : null);
    this.timelineCache = {
      key,
      rows,
      generation: read?.generation ?? -1,
      boundary: run?.boundary ?? 0,
      layers,
      response: {
        recorded: true,
        turns: rows.length,
        events: recorded.length,
        budget: config?.budget ?? null,
        tokenizer: config?.tokenizer ?? null,
        replay,
      },
    };
    return this.timelineCache;
  }

  /**
   * The timeline's replay of the whole log, from `start` when given (the layer tokens of the
   * turns before it are the previous timeline's). Returns the tokens by layer of each pack and
   * the last turn boundary reached with every event matching.
   */
  private async timelineReplay(
    read: ReadLog | null,
    start: ReplayCheckpoint | undefined,
    prev: TimelineCache | null,
  ) {
    const layers = new Map<number, LayerTokens>();
    let boundary = 0;
    // The last turn boundary is kept too: the next timeline goes on from there.
    const completed = (read?.events ?? []).filter((e) => e.type === 'turn_completed').length;
    const offer = read ? this.checkpoints.offer(read.generation, completed) : undefined;
    const result = await replaySession({
      engine: await this.cf(),
      ...(read
        ? {
            log: read,
            checkpoint: (turns: number, take: () => ReplayCheckpoint) => {
              boundary = turns;
              offer?.(turns, take);
            },
          }
        : {}),
      ...(start ? { from: start } : {}),
      keepPacks: false,
      onPack: (p) => layers.set(p.turn, layerTokens(p)),
    });
    if (result.resumed !== null && prev) {
      for (let t = 0; t < result.resumed; t++) {
        const l = prev.layers.get(t);
        if (l) layers.set(t, l);
      }
      boundary = Math.max(boundary, result.resumed);
    }
    return { result, layers, boundary };
  }

  /**
   * One pack as sent, rebuilt by replay (every page of it re-verified), by layer. The replay
   * goes on from the nearest checkpoint before the turn (see {@link ReplayCheckpoints}) and
   * leaves new ones; the log is read again (checked by content) on every request.
   */
  async pack(turn: number): Promise<PackResponse> {
    // The log alone (not the timeline, a replay of the whole session of its own); a turn the
    // log never started is refused from it, not after replaying all of it.
    const read = this.log.read();
    if (!read) throw new UsageError(`no session is recorded in ${this.info.dir} (no events.jsonl)`);
    const log = read.events;
    const started = log.filter((e) => e.type === 'turn_started');
    if (!started.some((e) => e.turn === turn)) {
      throw new UsageError(
        `this session has no turn ${turn}; its turns are 0..${started.length - 1}`,
      );
    }
    const engine = await this.cf();
    const replay = (from?: ReplayCheckpoint) =>
      replaySession({
        engine,
        log: read,
        atTurn: turn,
        keepPacks: false,
        ...(from ? { from } : {}),
        checkpoint: this.checkpoints.offer(read.generation, turn),
      });
    const from = this.checkpoints.before(read.generation, turn);
    // An error met after a checkpoint (a node tampered since) is reported as a replay from
    // the start meets it: at the first line that pages it.
    const r = await replay(from).catch((e: unknown) => {
      if (!from) throw e;
      return replay();
    });
    const pack = r.packs[r.packs.length - 1] as ContextPack;
    const recorded = log.find((e) => e.type === 'pack_built' && e.turn === turn);
    return packView(pack, recorded?.type === 'pack_built' ? recorded.pack_sha256 : null);
  }

  /** Closes the engine without compacting anything. */
  async close(): Promise<void> {
    this.closed = true;
    this.checkpoints.clear(); // their bytes leave the process's budget
    const opening = this.opening;
    this.opening = null;
    const cf = await opening?.catch(() => null);
    await cf?.close({ compact: false });
  }
}
