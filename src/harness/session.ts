// The public face of the harness: `Session` keeps the session's life (open, append, pin, the
// two turn hooks, close) and the intake of incoming messages; its options live in
// `session-options.ts`, its side over the engine in `session-live-io.ts`, and the turn
// lifecycle in `session-core.ts`. The moved public names are re-exported from here.
import { ContextFold } from '../engine/context-fold.js';
import type { ContextFoldEngine } from '../engine/types.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import { BrokenReferenceError } from '../protocol/ipcf-errors.js';
import { checkOptionKeys } from '../protocol/option-keys.js';
import { isoSeconds } from '../protocol/time.js';
import { stripArchivedBlocks } from './archived-block.js';
import {
  type HistoryMessage,
  type HistoryRecord,
  type Message,
  messageToRecord,
  parseMessage,
  type UserMessage,
} from './messages.js';
import type { ContextPack } from './pack.js';
import { redactMessages } from './redact-message.js';
import { stableJson } from './render.js';
import { SessionCore } from './session-core.js';
import {
  type EventLogMark,
  errorAtLine,
  loadEventLog,
  type SessionConfig,
  type StrippedRecord,
  storeEvents,
} from './session-events.js';
import { LiveIO } from './session-live-io.js';
import {
  checkSessionOptionKeys,
  checkSessionOptions,
  type SessionOptions,
  sessionConfig,
} from './session-options.js';
import { wellFormed } from './summarize.js';
import { TokenMeter } from './token-meter.js';
import { addToTurns } from './turns.js';

/** The option of `Session.pin`. */
const PIN_OPTION_KEYS = { source: true } as const;

export {
  defaultSummary,
  type SessionOptions,
  type Summarizer,
  type SummarizerInput,
  sessionConfig,
} from './session-options.js';

/** Messages validated, stripped and redacted, ready to record. */
interface Prepared {
  records: HistoryRecord[];
  stripped: StrippedRecord[];
  /** The messages as given, in order (their records are `records`). */
  originals: Message[];
}

/** Bound of the original → record map: past it the map starts over (it is only a cache). */
const RECORDED_FORMS = 100_000;

/** A message's identity as a caller sends it (time and position left out), hashed. */
function formKey(m: Message): string {
  const { timestamp: _t, stepId: _s, ...rest } = m as Message & { stepId?: number };
  return sha256Hex(stableJson(rest));
}

/** What {@link Session.afterTurn} did. */
export interface AfterTurnResult {
  turn: number;
  /** History positions given to the response messages. */
  appended: number[];
  /** Steps whose pages left the prompt. */
  evicted: number[];
}

/**
 * A long agent session over an IPCF store: call `beforeTurn(prompt)` to get the prompt to send
 * (a {@link ContextPack}), and `afterTurn(response)` once the model answered. Old verbose turns
 * are folded to verified cold storage and replaced by folded-step records; what the prompt
 * needs is paged back in for that one turn and evicted after it. Every decision is an event
 * in `events.jsonl`; `replaySession` rebuilds every pack from it byte for byte.
 *
 * @example
 * const session = await Session.open({ dir: '.contextfold', budget: 16_000 });
 * await session.append({ role: 'system', content: 'You are a careful coding agent.' });
 * const pack = await session.beforeTurn('Why did the migration fail?');
 * const reply = await callModel(pack.messages);
 * await session.afterTurn({ role: 'assistant', content: reply });
 * await session.close();
 */
export class Session {
  readonly engine: ContextFoldEngine;
  readonly config: SessionConfig;
  private readonly core: SessionCore;
  private readonly clock: () => Date;
  private readonly ownsEngine: boolean;
  private broken: Error | null = null;
  private closed = false;
  /** The event log as this session last read or wrote it (see `storeEvents`). */
  private logged: EventLogMark;
  /** Original message (by {@link formKey}) → history position of its record. */
  private readonly recorded = new Map<string, number>();

  private constructor(
    engine: ContextFoldEngine,
    ownsEngine: boolean,
    core: SessionCore,
    config: SessionConfig,
    clock: () => Date,
    logged: EventLogMark,
  ) {
    this.logged = logged;
    this.engine = engine;
    this.ownsEngine = ownsEngine;
    this.core = core;
    this.config = config;
    this.clock = clock;
  }

  /**
   * Opens (or resumes) the session stored in a store directory. An existing `events.jsonl` is
   * applied to rebuild the state, and every fold it records is checked against the store.
   */
  static async open(options: SessionOptions): Promise<Session> {
    if (!options || typeof options !== 'object')
      throw new UsageError('Session.open needs an options object');
    checkSessionOptionKeys(options);
    if (!options.engine && (typeof options.dir !== 'string' || options.dir === '')) {
      throw new UsageError('Session.open needs { dir } (the store directory) or { engine }');
    }
    if (options.engine !== undefined && typeof options.engine?.pageIn !== 'function') {
      throw new UsageError('engine must be an open engine: await ContextFold.open({ dir })');
    }
    checkSessionOptions(options);
    // The engine's setting is the one that applies: a contrary `redact` would be dropped silently.
    if (
      options.engine &&
      options.redact !== undefined &&
      options.redact !== options.engine.redact
    ) {
      throw new UsageError(
        `Session.open: redact: ${options.redact} contradicts the engine's redact: ${options.engine.redact} (the engine's applies); open the engine with the redaction wanted, or leave redact out`,
      );
    }
    const clock = options.clock ?? (() => new Date());
    const engine =
      options.engine ??
      (await ContextFold.open({
        dir: options.dir!,
        ...(options.policy ? { policy: options.policy } : {}),
        ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
        ...(options.sessionId ? { sessionId: options.sessionId } : {}),
        ...(options.retrieval ? { retrieval: options.retrieval } : {}),
        ...(options.redact !== undefined ? { redact: options.redact } : {}),
        ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
        clock,
      }));
    try {
      const fresh = sessionConfig(options, engine);
      const meter = new TokenMeter(engine.tokenizer);
      const core = new SessionCore(
        new LiveIO(engine, options.summarize, meter),
        meter,
        clock,
        options.pageInToolOutput === true,
      );
      const log = await loadEventLog(engine);
      for (const [i, e] of log.events.entries()) {
        try {
          core.state.apply(e);
        } catch (err) {
          throw errorAtLine(err, log.path, i + 1);
        }
      }
      const prior = core.state.config;
      // The step-id rule is the session's for good: one recorded before it was unified keeps
      // numbering (and rendering) its turns as it did.
      const { step_ids: _rule, ...legacy } = fresh;
      const config = prior && prior.step_ids === undefined ? legacy : fresh;
      if (prior && prior.tokenizer !== config.tokenizer) {
        throw new UsageError(
          `this session was recorded with the '${prior.tokenizer}' tokenizer; reopen it with that tokenizer (got '${config.tokenizer}')`,
        );
      }
      await Session.checkFolds(core, engine);
      if (!prior || JSON.stringify(prior) !== JSON.stringify(config)) {
        core.record({ type: 'session_opened', config });
      }
      const mark = await storeEvents(engine, core.drain(), log.mark);
      return new Session(engine, !options.engine, core, config, clock, mark ?? log.mark);
    } catch (e) {
      if (!options.engine) await engine.close();
      throw e;
    }
  }

  /** Every fold the log records must be in the store with the same payload (fail closed). */
  private static async checkFolds(core: SessionCore, engine: ContextFoldEngine): Promise<void> {
    if (core.state.foldOrder.length === 0) return;
    const entries = new Map((await engine.entries()).map((e) => [e.step_id, e]));
    for (const r of core.state.foldOrder) {
      const entry = entries.get(r.step_id);
      const want = core.state.foldedPayload.get(r.step_id);
      if (!entry) {
        throw new BrokenReferenceError(
          `the session log says step ${r.step_id} is folded, but the store has no such node (${engine.dir})`,
          { stepId: r.step_id, path: String(r.artifacts.cold_node_ref) },
        );
      }
      if (entry.payload_sha256 !== want) {
        throw new BrokenReferenceError(
          `step ${r.step_id} in the store holds another payload than the session folded (${entry.payload_sha256.slice(0, 12)}… vs ${String(want).slice(0, 12)}…)`,
          { stepId: r.step_id, path: entry.file_path },
        );
      }
    }
  }

  private assertUsable(): void {
    if (this.closed) throw new UsageError('this session is closed; open it again');
    if (this.broken) {
      throw new UsageError(
        `this session stopped after an error (${this.broken.message}); reopen it to continue from its last recorded turn`,
      );
    }
  }

  /** Runs a state change; on failure nothing of it is written and the session must be reopened. */
  private async change<T>(fn: () => Promise<T> | T): Promise<T> {
    this.assertUsable();
    try {
      const out = await fn();
      // Only onto the log as this session last saw it: a second writer of the same session
      // (another process, a second middleware instance) is refused, never interleaved.
      this.logged = (await storeEvents(this.engine, this.core.drain(), this.logged)) ?? this.logged;
      return out;
    } catch (e) {
      // Bad input is refused before `change` runs; a failure in here leaves the in-memory
      // state ahead of the log (nothing of this call is written), so the session has to be
      // reopened from its log.
      this.core.drain();
      this.broken = e instanceof Error ? e : new Error(String(e));
      throw e;
    }
  }

  /**
   * Validates incoming messages, strips echoed archived blocks and redacts secrets (when the
   * engine redacts): what the session records, folds and renders is the redacted form.
   */
  private async prepare(messages: Message | readonly Message[]): Promise<Prepared> {
    const list = Array.isArray(messages) ? messages : [messages as Message];
    const from = this.core.state.history.length;
    const parsed = list.map((raw, i) => parseMessage(raw, `message ${from + i}`));
    const records: HistoryRecord[] = [];
    const stripped: StrippedRecord[] = [];
    const probe: HistoryMessage[] = [];
    const bare = parsed.map((m, i) => {
      const s = stripArchivedBlocks(m.content);
      if (s.blocks.length > 0) stripped.push({ step_id: from + i, blocks: s.blocks });
      return { ...m, content: s.text };
    });
    const clean = await this.redactMessages(bare);
    for (const [i, m] of clean.entries()) {
      const h = {
        ...m,
        stepId: from + i,
        timestamp: parsed[i]!.timestamp ?? isoSeconds(this.clock()),
      } as HistoryMessage;
      probe.push(h);
      records.push(messageToRecord(h));
    }
    // Check tool-call pairing before anything is recorded, on a copy of the last turn (the only
    // one a new message can join).
    const last = this.core.state.turns[this.core.state.turns.length - 1];
    const turns = last ? [{ ...last, steps: [...last.steps], messages: [...last.messages] }] : [];
    for (const h of probe) addToTurns(turns, h);
    return { records, stripped, originals: parsed };
  }

  /** Notes, once recorded, which history position holds each original message's record. */
  private noteRecorded(p: Prepared): void {
    if (this.recorded.size + p.originals.length > RECORDED_FORMS) this.recorded.clear();
    for (const [i, m] of p.originals.entries()) {
      this.recorded.set(formKey(m), p.records[i]!.step_id);
    }
  }

  /**
   * Messages in the form this session records them (archived blocks stripped, secrets redacted):
   * what an integration that keeps the caller's own copy of the conversation compares with
   * `history()`. A message this process recorded is answered with its record; others (a new
   * process resuming a session) are prepared here, together, as one append would.
   *
   * @example
   * const seen = await session.recordedForm(incoming.slice(0, session.history().length));
   */
  async recordedForm(messages: readonly Message[]): Promise<Message[]> {
    const history = this.core.state.history;
    const out: (Message | null)[] = messages.map((m) => {
      const at = this.recorded.get(formKey(m));
      return at !== undefined && history[at] ? history[at]! : null;
    });
    const missing = messages.filter((_, i) => out[i] === null);
    if (missing.length > 0) {
      const bare = missing.map((m) => ({ ...m, content: stripArchivedBlocks(m.content).text }));
      const clean = await this.redactMessages(bare);
      let k = 0;
      out.forEach((m, i) => {
        if (m === null) out[i] = clean[k++]!;
      });
    }
    return out as Message[];
  }

  /**
   * Messages as this session records them: half an emoji (a lone surrogate, which has no UTF-8
   * form: no redactor scans it and no cold node holds it) as U+FFFD, as an import stores it;
   * then with secrets redacted, all together (see `redactMessages`), when the engine redacts.
   * An integration that keeps its own copy of the conversation compares it with `history()` in
   * this form.
   */
  async redactMessages<M extends Message>(messages: readonly M[]): Promise<M[]> {
    const storable = await redactMessages(messages, async (t) => t.map(wellFormed));
    if (!this.engine.redact) return storable;
    return redactMessages(storable, (t) => this.engine.redactTexts(t));
  }

  /**
   * Appends messages to the history (system messages become pinned L3). Each gets the next
   * history position as its `step_id`. Archived blocks a client echoes back are removed, and
   * secrets are redacted before anything is recorded (unless the engine does not redact).
   */
  async append(messages: Message | readonly Message[]): Promise<number[]> {
    this.assertUsable();
    const prepared = await this.prepare(messages);
    return this.change(() => {
      this.core.appendRecords(prepared.records, prepared.stripped);
      this.noteRecorded(prepared);
      return prepared.records.map((r) => r.step_id);
    });
  }

  /**
   * Gives leading system messages new text: the system prompt is the app's current
   * instructions, not a turn, so a call may change it while the rest of the history goes on
   * (`step` is the history position of one of the system messages the history starts with).
   * The text is recorded as `append` records it (archived blocks stripped, secrets redacted),
   * one `system_changed` event per message whose recorded text differs; packs use it from the
   * next turn on. Returns the positions changed.
   *
   * @example
   * await session.changeSystem([{ step: 0, content: 'Today is 2026-12-06.' }]);
   */
  async changeSystem(changes: readonly { step: number; content: string }[]): Promise<number[]> {
    this.assertUsable();
    const open = this.core.state.open;
    if (open)
      throw new UsageError(`turn ${open.turn} is still open: call afterTurn(response) first`);
    const history = this.core.state.history;
    const lead = history.findIndex((m) => m.role !== 'system');
    const leading = lead === -1 ? history.length : lead;
    for (const c of changes) {
      if (!Number.isInteger(c?.step) || c.step < 0 || c.step >= leading) {
        throw new UsageError(
          `changeSystem: step ${String(c?.step)} is not one of the leading system messages (steps 0..${leading - 1})`,
        );
      }
      if (typeof c.content !== 'string') {
        throw new UsageError(`changeSystem: the content of step ${c.step} must be a string`);
      }
    }
    const bare = changes.map((c) => ({
      role: 'system' as const,
      content: stripArchivedBlocks(c.content).text,
    }));
    const clean = await this.redactMessages(bare);
    return this.change(() => {
      const changed: number[] = [];
      changes.forEach((c, i) => {
        const content = clean[i]!.content;
        if (this.core.state.history[c.step]!.content === content) return;
        this.core.record({ type: 'system_changed', step_id: c.step, content });
        changed.push(c.step);
      });
      // The caller's earlier text of these messages no longer has their record; the new one does.
      for (const [key, at] of this.recorded) if (changed.includes(at)) this.recorded.delete(key);
      for (const c of changes)
        this.recorded.set(formKey({ role: 'system', content: c.content }), c.step);
      return changed;
    });
  }

  /** Pins a note into L3 (never folded, never dropped); a newer note with the same `source` replaces it. */
  async pin(text: string, options: { source?: string } = {}): Promise<number> {
    this.assertUsable();
    if (typeof text !== 'string' || text.trim() === '')
      throw new UsageError('pin needs a non-empty note text');
    checkOptionKeys('pin', options, PIN_OPTION_KEYS);
    if (options.source !== undefined && typeof options.source !== 'string') {
      throw new UsageError('pin source must be a string');
    }
    const whole = wellFormed(text);
    const clean = this.engine.redact ? await this.engine.redactText(whole) : whole;
    return this.change(() => {
      const id = this.core.state.noteCount;
      this.core.record({ type: 'pin', note_id: id, source: options.source ?? null, text: clean });
      return id;
    });
  }

  /**
   * `pre_turn_dispatch`: appends the prompt (if any) and returns the pack to send. Without a
   * prompt, the live layer is what the history ends with: the pending tool output of a tool
   * loop, or a user message not answered yet (a retried call, or a client that appended it).
   * Pass a user message instead of a string to give the prompt its own timestamp.
   */
  async beforeTurn(userPrompt?: string | UserMessage): Promise<ContextPack> {
    this.assertUsable();
    if (this.core.state.open) {
      throw new UsageError(
        `turn ${this.core.state.open.turn} is still open: call afterTurn(response) first`,
      );
    }
    let prepared: Prepared | null = null;
    if (typeof userPrompt === 'string') {
      prepared = await this.prepare({ role: 'user', content: userPrompt });
    } else if (userPrompt !== undefined) {
      if (userPrompt === null || typeof userPrompt !== 'object' || userPrompt.role !== 'user') {
        throw new UsageError(
          'beforeTurn takes the user prompt as a string or a { role: "user" } message',
        );
      }
      prepared = await this.prepare(userPrompt);
    }
    return this.change(async () => {
      let promptStep = this.trailingPrompt();
      if (prepared) {
        promptStep = this.core.state.history.length;
        this.core.appendRecords(prepared.records, prepared.stripped);
        this.noteRecorded(prepared);
      }
      return this.core.startTurn(promptStep);
    });
  }

  /** `post_turn_response`: appends the response (if any), evicts this turn's pages (CONF-07). */
  async afterTurn(response?: Message | readonly Message[]): Promise<AfterTurnResult> {
    this.assertUsable();
    if (!this.core.state.open)
      throw new UsageError('no turn is open: call beforeTurn(prompt) first');
    const prepared = response === undefined ? null : await this.prepare(response);
    return this.change(async () => {
      if (prepared) {
        this.core.appendRecords(prepared.records, prepared.stripped);
        this.noteRecorded(prepared);
      }
      const r = await this.core.completeTurn();
      return {
        turn: r.turn,
        appended: prepared ? prepared.records.map((x) => x.step_id) : [],
        evicted: r.evicted,
      };
    });
  }

  /** The last history message's position when it is a user prompt whose turn is not folded. */
  private trailingPrompt(): number | null {
    const s = this.core.state;
    const last = s.history[s.history.length - 1];
    if (last?.role !== 'user') return null;
    const turn = s.turnAt(last.stepId);
    if (!turn || s.folded.has(turn.stepId)) return null;
    return last.stepId;
  }

  /**
   * Tokens of the whole history rendered verbatim, as the pack counts them: what every prompt
   * would cost without folding (the baseline `contextfold session --per-call` and the proxy
   * report savings against). Counts are memoised per message.
   */
  historyTokens(): number {
    let n = 0;
    for (const m of this.core.state.history) n += this.core.meter.message(m);
    return n;
  }

  /** The history so far (a copy): every message with its step id and time. */
  history(): HistoryMessage[] {
    return this.core.state.history.map((m) => ({ ...m }));
  }

  /** A summary of the session state. */
  status(): {
    history_length: number;
    turns_started: number;
    open_turn: number | null;
    folded: number;
    l2_window_start: number;
    pinned: number;
    config: SessionConfig;
  } {
    const s = this.core.state;
    return {
      history_length: s.history.length,
      turns_started: s.turnCount,
      open_turn: s.open?.turn ?? null,
      folded: s.foldOrder.length,
      l2_window_start: s.l2Start,
      pinned: s.pinned.length,
      config: { ...this.config },
    };
  }

  /** Closes the session (and the engine it opened). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsEngine) await this.engine.close();
  }
}
