import type { PageWindow } from '../engine/types.js';
import { scanPage, summarizeFindings } from '../guard/scan-page.js';
import { UsageError } from '../protocol/errors.js';
import type { PageInFailure } from '../protocol/results.js';
import { isoSeconds } from '../protocol/time.js';
import { buildFoldedStep, type FoldRef } from './folded-step.js';
import type { HistoryRecord } from './messages.js';
import {
  assemblePack,
  type ContextPack,
  type FoldedNote,
  frameTokens,
  type PackPage,
  packSha256,
  pinnedTokens,
  recordTokens,
  type TruncationNote,
  turnTokens,
} from './pack.js';
import type { FoldReason, PendingEvent, SessionEvent, StrippedRecord } from './session-events.js';
import { SessionState } from './session-state.js';
import type { TokenMeter } from './token-meter.js';
import { type Turn, turnPayload } from './turns.js';

/** A turn to fold, with its summary and the exact payload that goes to cold storage. */
export interface FoldRequest {
  turn: Turn;
  summary: string;
  payload: string;
}

/** A verified page as the session records it (the cap lets replay hydrate the same bytes). */
export interface PagedIn extends PackPage {
  cap: number;
  /** A ranked page's window of lines (replay re-derives it); absent for a chunk. */
  window?: PageWindow;
  tokens: number;
  content_sha256: string;
}

/**
 * What a tool-loop continuation scans for page-in: the pending tool outputs (the new
 * information the model is about to read), joined by blank lines.
 */
function toolOutputText(turn: Turn): string {
  return turn.messages
    .filter((m) => m.role === 'tool')
    .map((m) => m.content)
    .join('\n\n');
}

/**
 * Everything a session does outside its own state. The live session talks to the engine;
 * replay answers from the recorded events and re-verifies against the store, read-only.
 */
export interface SessionIO {
  /** `payload` is the turn's fold payload (what a custom summariser is shown). */
  summarize(
    turn: Turn,
    payload: string,
  ): Promise<{ summary: string; source: 'default' | 'custom' }>;
  fold(requests: FoldRequest[]): Promise<FoldRef[]>;
  /**
   * Pages for a scanned text. `room` is what the budget leaves once L3 and L0 (never dropped)
   * are counted; the live side refuses pages beyond it, replay returns what was recorded.
   */
  pageIn(
    prompt: string,
    turn: number,
    room: number,
  ): Promise<{ pages: PagedIn[]; failures: PageInFailure[] }>;
  evict(stepId: number, turn: number): Promise<void>;
}

/**
 * The turn lifecycle, shared by the live session and replay: every decision is an event, and
 * state changes only by applying the events it records. Deterministic given the history, the
 * recorded inputs and the policy; the clock only stamps `recorded_at`.
 */
export class SessionCore {
  private pending: SessionEvent[] = [];

  constructor(
    readonly io: SessionIO,
    readonly meter: TokenMeter,
    private readonly clock: () => Date,
    /** Scan a tool loop's pending output for page-in too (not only a user prompt). */
    private readonly scanToolOutput = false,
    /** The state to go on from (a replay checkpoint's copy); default a new session's. */
    readonly state = new SessionState(),
  ) {}

  /** Records an event: stamps it, applies it, queues it for the log. */
  record(e: PendingEvent): SessionEvent {
    const full = { ...e, recorded_at: isoSeconds(this.clock()) } as SessionEvent;
    this.state.apply(full);
    this.pending.push(full);
    return full;
  }

  /** Takes the events recorded since the last call (to write them, or to compare them). */
  drain(): SessionEvent[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** Appends prepared history records (validated, stamped, stripped) at the end. */
  appendRecords(records: HistoryRecord[], stripped: StrippedRecord[]): void {
    if (records.length === 0) return;
    this.record({ type: 'append', from: this.state.history.length, messages: records, stripped });
  }

  private get config() {
    const c = this.state.config;
    if (!c) throw new UsageError('session has no configuration: open it with Session.open');
    return c;
  }

  /** Non-system turns, oldest first. */
  private conversation(): readonly Turn[] {
    return this.state.conversation;
  }

  /**
   * The conversation's turns from the first one not folded on (those before it are all folded:
   * never recent, never a candidate, never part of the live exchange), with its index there.
   */
  private unsettled(): { from: number; turns: readonly Turn[] } {
    const from = this.state.settled();
    return { from, turns: this.state.conversation.slice(from) };
  }

  /** The L0 turn: the prompt, or a trailing turn whose last message is tool output. */
  private currentTurn(promptStep: number | null): Turn | null {
    if (promptStep !== null) return this.state.turnAt(promptStep) ?? null;
    const conv = this.conversation();
    const last = conv[conv.length - 1];
    if (!last || this.state.folded.has(last.stepId)) return null;
    return last.messages[last.messages.length - 1]?.role === 'tool' ? last : null;
  }

  /**
   * The L1 turns of the live exchange (`SessionConfig.live_task`), oldest first: for a pending
   * tool output, the user request the loop works on; for a prompt that follows a tool result
   * with no reply (Claude Code sends text after the results of one message), that tool turn and
   * the request before it. A user message that follows a tool result is such text, not a
   * request. Empty under the earlier rule.
   */
  private taskTurns(current: Turn | null, promptStep: number | null): Turn[] {
    if (!current || this.state.config?.live_task !== 'kept') return [];
    const conv = this.conversation();
    const endsInTool = (t: Turn | undefined): boolean =>
      t?.messages[t.messages.length - 1]?.role === 'tool';
    // The current turn is at (or near) the end; each turn is in the list once.
    let i = conv.lastIndexOf(current);
    const out: Turn[] = [];
    if (promptStep !== null) {
      const before = conv[i - 1];
      if (!endsInTool(before) || this.state.folded.has(before!.stepId)) return [];
      out.push(before!);
      i--;
    }
    // The settled turns before are all folded: the request is not among them.
    const settled = this.state.settled();
    for (let j = i - 1; j >= settled; j--) {
      const t = conv[j]!;
      if (t.kind !== 'user' || endsInTool(conv[j - 1])) continue;
      if (!this.state.folded.has(t.stepId)) out.unshift(t);
      break;
    }
    return out;
  }

  /** L1: every turn not folded, not system, not the current one. */
  private recentTurns(current: Turn | null): Turn[] {
    return this.unsettled().turns.filter((t) => t !== current && !this.state.folded.has(t.stepId));
  }

  /** Turns older than the last `keep_recent` that are not folded yet (nor live). */
  private foldCandidates(current: Turn | null, task: readonly Turn[] = []): Turn[] {
    const conv = this.conversation();
    const at = current ? conv.lastIndexOf(current) : -1;
    // Of the conversation less the current turn, those before `cut`; the settled are folded.
    const cut = Math.max(0, conv.length - (at >= 0 ? 1 : 0) - this.config.keep_recent);
    const { from, turns } = this.unsettled();
    const out: Turn[] = [];
    turns.forEach((t, k) => {
      const j = from + k;
      if (j === at || j - (at >= 0 && at < j ? 1 : 0) >= cut) return;
      if (!this.state.folded.has(t.stepId) && !task.includes(t)) out.push(t);
    });
    return out;
  }

  /**
   * Tokens of the pack without pages and before compression: what the policy plans with. An
   * oversized live part (L0 and `task`) counts at half the room under the live rule with
   * excerpts (the pack cuts it to that), so one large output does not fold every recent turn.
   */
  baseline(current: Turn | null, task: readonly Turn[] = []): number {
    const s = this.state;
    const pinned = pinnedTokens(this.meter, s.pinned);
    let n = pinned;
    if (s.l2Start < s.foldOrder.length) {
      n += frameTokens(this.meter);
      for (let i = s.l2Start; i < s.foldOrder.length; i++)
        n += recordTokens(this.meter, s.foldOrder[i]!);
    }
    let live = current ? turnTokens(current, this.meter) : 0;
    for (const t of this.recentTurns(current)) {
      if (task.includes(t)) live += turnTokens(t, this.meter);
      else n += turnTokens(t, this.meter);
    }
    const cfg = this.config;
    if (cfg.live_task === 'kept' && (cfg.live_overflow ?? 'send-whole') === 'excerpt') {
      live = Math.min(live, Math.max(0, Math.floor((cfg.budget - cfg.page_reserve - pinned) / 2)));
    }
    return n + live;
  }

  private async foldTurns(
    turn: number,
    turns: Turn[],
    reason: FoldReason,
    out: FoldedNote[],
  ): Promise<void> {
    if (turns.length === 0) return;
    const payloads = turns.map((t) => turnPayload(t, this.state.stepIds));
    const summaries = await Promise.all(turns.map((t, i) => this.io.summarize(t, payloads[i]!)));
    const requests = turns.map((t, i) => ({
      turn: t,
      summary: summaries[i]!.summary,
      payload: payloads[i]!,
    }));
    const refs = await this.io.fold(requests);
    turns.forEach((t, i) => {
      const record = buildFoldedStep(
        t,
        summaries[i]!.summary,
        refs[i]!,
        this.state.stepIds,
        this.config.record_fields === 'bounded',
      );
      this.record({
        type: 'fold',
        turn,
        step_id: t.stepId,
        steps: [...t.steps],
        reason,
        summary_source: summaries[i]!.source,
        payload_sha256: refs[i]!.payload_sha256,
        record,
      });
      out.push({ step_id: t.stepId, reason });
    });
  }

  /** Moves the persistent L2 window start forward, oldest records first, down to `limit`. */
  private advanceWindow(
    turn: number,
    current: Turn | null,
    task: readonly Turn[],
    limit: number,
    reason: string,
    notes: TruncationNote[],
  ): void {
    const s = this.state;
    let total = this.baseline(current, task);
    let start = s.l2Start;
    const dropped: number[] = [];
    while (total > limit && start < s.foldOrder.length) {
      const r = s.foldOrder[start]!;
      total -= recordTokens(this.meter, r);
      start++;
      if (start === s.foldOrder.length) total -= frameTokens(this.meter);
      dropped.push(r.step_id);
    }
    if (dropped.length === 0) return;
    this.record({ type: 'window', turn, layer: 'L2', start, dropped_steps: dropped, reason });
    notes.push({ layer: 'L2', steps: dropped, reason, persistent: true });
  }

  /**
   * `pre_turn_dispatch`: folds what the policy says, moves the L2 window if over budget, pages
   * in what the prompt needs (verified, bounded), and assembles the pack.
   */
  async startTurn(promptStep: number | null): Promise<ContextPack> {
    if (this.state.open) {
      throw new UsageError(
        `turn ${this.state.open.turn} is still open: call afterTurn(response) before the next beforeTurn`,
      );
    }
    const turn = this.state.turnCount;
    this.record({
      type: 'turn_started',
      turn,
      prompt_step: promptStep,
      history_length: this.state.history.length,
    });
    const current = this.currentTurn(promptStep);
    const task = this.taskTurns(current, promptStep);
    const { folded, truncated } = await this.fitBudget(turn, current, task);
    const { pages, failures } = await this.pageInFor(turn, current, task, promptStep);
    return this.buildPack({ turn, promptStep, current, task, pages, failures, folded, truncated });
  }

  /**
   * Folds turns over the size threshold, then everything foldable above the high-water mark,
   * then moves the L2 window and folds the oldest recent turns until the baseline fits the
   * budget less the page reserve.
   */
  private async fitBudget(
    turn: number,
    current: Turn | null,
    task: readonly Turn[],
  ): Promise<{ folded: FoldedNote[]; truncated: TruncationNote[] }> {
    const cfg = this.config;
    const folded: FoldedNote[] = [];
    const truncated: TruncationNote[] = [];
    const big = this.foldCandidates(current, task).filter(
      (t) => turnTokens(t, this.meter) > cfg.fold_threshold,
    );
    await this.foldTurns(turn, big, 'size', folded);
    if (this.baseline(current, task) > cfg.high_water_tokens) {
      await this.foldTurns(turn, this.foldCandidates(current, task), 'high_water', folded);
    }
    const target = cfg.budget - cfg.page_reserve;
    while (this.baseline(current, task) > target) {
      this.advanceWindow(
        turn,
        current,
        task,
        cfg.low_water_tokens,
        'over budget: oldest folded-step records leave the prompt (still paged in on demand)',
        truncated,
      );
      if (this.baseline(current, task) <= target) break;
      // The live exchange's own turns are never folded while it runs (see `taskTurns`).
      const oldest = this.recentTurns(current).find((t) => !task.includes(t));
      if (!oldest) break;
      await this.foldTurns(turn, [oldest], 'budget', folded);
      truncated.push({
        layer: 'L1',
        steps: [...oldest.steps],
        reason: 'over budget with L2 empty: the oldest recent turn is folded out of L1',
        persistent: true,
      });
    }
    return { folded, truncated };
  }

  /**
   * Pages in what the prompt (or, with `scanToolOutput`, the current tool output) needs within
   * the budget left beside the pinned and current turns (and, under the strict budget rule, the
   * live exchange's earlier turns), and records each page and failure.
   */
  private async pageInFor(
    turn: number,
    current: Turn | null,
    task: readonly Turn[],
    promptStep: number | null,
  ): Promise<{ pages: PagedIn[]; failures: PageInFailure[] }> {
    let pages: PagedIn[] = [];
    let failures: PageInFailure[] = [];
    const scanned =
      promptStep !== null
        ? (this.state.history[promptStep]?.content ?? '')
        : current && this.scanToolOutput
          ? toolOutputText(current)
          : '';
    if (scanned.trim() !== '') {
      let fixed =
        pinnedTokens(this.meter, this.state.pinned) +
        (current ? turnTokens(current, this.meter) : 0);
      // Under the strict budget rule the live exchange's earlier turns are never dropped either.
      if (this.config.pack_budget === 'strict')
        for (const t of task) fixed += turnTokens(t, this.meter);
      ({ pages, failures } = await this.io.pageIn(scanned, turn, this.config.budget - fixed));
    }
    for (const p of pages) {
      const findings = summarizeFindings(p.findings ?? scanPage(p.content));
      this.record({
        type: 'page_in',
        turn,
        step_id: p.step_id,
        payload_sha256: p.payload_sha256,
        content_sha256: p.content_sha256,
        cap: p.cap,
        ...(p.window ? { window: { ...p.window } } : {}),
        chunk: p.chunk,
        chunks: p.chunks,
        truncated: p.truncated,
        tokens: p.tokens,
        matched_terms: [...p.matched_terms],
        ...(findings.length > 0 ? { findings } : {}),
      });
    }
    for (const f of failures) this.record({ type: 'page_failed', turn, ...f });
    return { pages, failures };
  }

  /** Assembles the turn's pack and records what it compressed, truncated and built. */
  private buildPack(parts: {
    turn: number;
    promptStep: number | null;
    current: Turn | null;
    task: readonly Turn[];
    pages: PagedIn[];
    failures: PageInFailure[];
    folded: FoldedNote[];
    truncated: TruncationNote[];
  }): ContextPack {
    const { turn, promptStep, current, task } = parts;
    const cfg = this.config;
    const s = this.state;
    const pack = assemblePack({
      turn,
      stepId: promptStep ?? s.history.length,
      budget: cfg.budget,
      meter: this.meter,
      pinned: s.pinned,
      records: s.foldOrder.slice(s.l2Start),
      recent: this.recentTurns(current),
      current,
      currentIsPrompt: promptStep !== null,
      pages: parts.pages,
      pageFailures: parts.failures,
      folded: parts.folded,
      priorTruncated: parts.truncated,
      liveOverflow: cfg.live_overflow ?? 'send-whole',
      ...(cfg.live_task === 'kept' ? { live: { task } } : {}),
      ...(cfg.pack_budget === 'strict' ? { strictBudget: true } : {}),
    });
    if (pack.metadata.compressed.length > 0) {
      this.record({ type: 'compress', turn, notes: pack.metadata.compressed });
    }
    const transient = pack.metadata.truncated.filter((t) => !t.persistent);
    if (transient.length > 0) this.record({ type: 'truncate', turn, notes: transient });
    if (pack.metadata.live_excerpts.length > 0) {
      this.record({ type: 'live_excerpt', turn, notes: pack.metadata.live_excerpts });
    }
    this.record({
      type: 'pack_built',
      turn,
      step_id: pack.step_id,
      tokens: pack.tokens,
      baseline_tokens: pack.metadata.baseline_tokens,
      budget: pack.budget,
      pack_sha256: packSha256(pack),
      over_budget: pack.metadata.over_budget,
      warnings: [...pack.metadata.warnings],
    });
    return pack;
  }

  /** `post_turn_response`: evicts this turn's pages (CONF-07) and closes the turn. */
  async completeTurn(): Promise<{ turn: number; evicted: number[] }> {
    const open = this.state.open;
    if (!open) throw new UsageError('no turn is open: call beforeTurn(prompt) first');
    const pages = [...open.pages];
    for (const step of pages) {
      await this.io.evict(step, open.turn);
      this.record({ type: 'evict', turn: open.turn, step_id: step });
    }
    this.record({
      type: 'turn_completed',
      turn: open.turn,
      history_length: this.state.history.length,
    });
    return { turn: open.turn, evicted: pages };
  }
}
