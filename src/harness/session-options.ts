// What `Session.open` takes and what it makes of it: the options, their validation into the
// recorded policy (`SessionConfig`, which replay compares exactly), and the summariser option
// with its deterministic default, which replay uses too.
import type { ContextFoldEngine, RetrievalMode, Tokenizer } from '../engine/types.js';
import { UsageError } from '../protocol/errors.js';
import { checkOptionKeys } from '../protocol/option-keys.js';
import type { HydrationPolicy } from '../protocol/policy.js';
import { DEFAULT_POLICY, perTurnCap } from '../protocol/policy.js';
import type { LiveOverflow } from './live-excerpt.js';
import { type Message, toPlainMessage } from './messages.js';
import type { SessionConfig } from './session-events.js';
import { summarizeTurn, type TurnFacts } from './summarize.js';
import type { Turn } from './turns.js';

/** What a custom summariser receives for one turn. */
export interface SummarizerInput {
  stepId: number;
  steps: number[];
  messages: Message[];
  /** The exact payload that goes to cold storage. */
  payload: string;
  /** The deterministic facts of the turn (files, commands, errors, status…). */
  facts: TurnFacts;
}

/**
 * A caller-supplied summariser (for example an LLM call). Its output is the fold's summary
 * input; the record keeps at most 280 characters of it. Replay reuses the recorded output.
 * Anything but a string with some non-whitespace text (`''`, `'  '`, `null`…) is a
 * `UsageError` naming the step, and the turn fails (no fold is recorded).
 */
export type Summarizer = (turn: SummarizerInput) => string | Promise<string>;

/** Options of {@link Session.open}. */
export interface SessionOptions {
  /** Store directory (e.g. `.contextfold`); `events.jsonl` lives there too. Not needed with `engine`. */
  dir?: string;
  /** Token budget of every pack, counted with the engine's tokenizer. */
  budget: number;
  /** Token counter (passed to the engine). Default `o200k`. */
  tokenizer?: Tokenizer | 'o200k' | 'reference';
  /** Turns before the current one always kept verbatim (L1). Default 10. */
  keepRecent?: number;
  /** Older turns above this many tokens are folded. Default 256. */
  foldThreshold?: number;
  /** Fraction of `budget − pageReserve` above which every older turn is folded. Default 0.8. */
  highWater?: number;
  /** Fraction the L2 window drops back to when the pack is over budget. Default 0.5. */
  lowWater?: number;
  /** Tokens kept free for paged-in blocks. Default min(per-turn page cap, budget / 2). */
  pageReserve?: number;
  /**
   * Also scan the pending output of a tool loop for page-in, not only user prompts. Default
   * false; `contextfold proxy` and `contextfold session --per-call` turn it on (most calls of
   * an agent are tool-loop continuations).
   */
  pageInToolOutput?: boolean;
  /**
   * A live turn (the prompt or pending tool output) that does not fit the budget beside the
   * pinned layer: `'excerpt'` (default) sends the head and the tail of its oversized tool
   * outputs, then of the prompt, with a marker line saying how much was left out, so the pack
   * fits; `'send-whole'` sends it whole, over budget. The history and the store keep every
   * byte either way; the turn folds normally later.
   */
  liveOverflow?: LiveOverflow;
  /** Custom summariser; default: the deterministic offline {@link summarizeTurn}. */
  summarize?: Summarizer;
  /** Use this engine instead of opening one on `dir` (the session does not close it). */
  engine?: ContextFoldEngine;
  /** Hydration policy for the engine the session opens. */
  policy?: HydrationPolicy;
  sessionId?: string;
  retrieval?: RetrievalMode;
  /**
   * Redact secrets (default true) in everything the session records and folds: incoming
   * messages, pinned notes, custom summaries. `false` keeps the text as given. With `engine`,
   * the engine's own setting applies, and a contrary `redact` is a `UsageError`.
   */
  redact?: boolean;
  /** Ranked-analysis cache directory of the engine the session opens (`OpenOptions.cacheDir`). */
  cacheDir?: string | false;
  /**
   * Clock for message times and `recorded_at`. A folded-step record in a pack shows its turn's
   * time, so two runs of the same conversation give the same pack bytes only with the same
   * clock (replay uses the recorded times).
   */
  clock?: () => Date;
}

/** Every option {@link Session.open} takes (the compiler keeps this list complete). */
export const SESSION_OPTION_KEYS: Record<keyof SessionOptions, true> = {
  dir: true,
  budget: true,
  tokenizer: true,
  keepRecent: true,
  foldThreshold: true,
  highWater: true,
  lowWater: true,
  pageReserve: true,
  pageInToolOutput: true,
  liveOverflow: true,
  summarize: true,
  engine: true,
  policy: true,
  sessionId: true,
  retrieval: true,
  redact: true,
  cacheDir: true,
  clock: true,
};

/**
 * Throws a {@link UsageError} naming the options `Session.open` does not know (a misspelt
 * `keepRecnt: 4` was ignored: the default applied silently), as `ContextFold.open` does.
 */
export function checkSessionOptionKeys(options: object): void {
  checkOptionKeys('Session.open', options, SESSION_OPTION_KEYS);
}

/** A bad option value as the error shows it: a string quoted (`got 32000` hid that '32000' is one). */
const shown = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : String(value);

function intOption(value: number | undefined, fallback: number, name: string, min: number): number {
  const v = value ?? fallback;
  if (!Number.isSafeInteger(v) || v < min) {
    throw new UsageError(`${name} must be an integer >= ${min}, got ${shown(value)}`);
  }
  return v;
}

function fraction(value: number | undefined, fallback: number, name: string): number {
  const v = value ?? fallback;
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) {
    throw new UsageError(`${name} must be a number between 0 and 1, got ${shown(value)}`);
  }
  return v;
}

/**
 * Throws a {@link UsageError} for the first option of the session's own with a wrong value,
 * before any engine is opened (the engine's options are `ContextFold.open`'s to check): what
 * `Session.open` checks first, and the middleware when it is made rather than on its first call.
 *
 * @example
 * checkSessionOptions({ budget: 32_000, highWater: 2 });
 * // UsageError: highWater must be a number between 0 and 1, got 2
 */
export function checkSessionOptions(options: SessionOptions): void {
  if (options.summarize !== undefined && typeof options.summarize !== 'function') {
    throw new UsageError('summarize must be a function (turn) => string | Promise<string>');
  }
  if (options.pageInToolOutput !== undefined && typeof options.pageInToolOutput !== 'boolean') {
    throw new UsageError(
      `pageInToolOutput must be true or false, got ${JSON.stringify(options.pageInToolOutput)}`,
    );
  }
  // The policy and the tokenizer only set the default page reserve and the recorded name.
  sessionConfig(options, { policy: DEFAULT_POLICY, tokenizer: { name: '' } });
}

/** Resolves the options into the recorded policy (all integers). */
export function sessionConfig(
  options: SessionOptions,
  engine: Pick<ContextFoldEngine, 'policy'> & { tokenizer: { name: string } },
): SessionConfig {
  const budget = intOption(options.budget, Number.NaN, 'budget', 1);
  const reserveDefault = Math.min(perTurnCap(engine.policy), Math.floor(budget / 2));
  const pageReserve = intOption(options.pageReserve, reserveDefault, 'pageReserve', 0);
  if (pageReserve >= budget) {
    throw new UsageError(
      `pageReserve (${pageReserve}) must be smaller than the budget (${budget})`,
    );
  }
  const high = fraction(options.highWater, 0.8, 'highWater');
  const low = fraction(options.lowWater, 0.5, 'lowWater');
  if (low > high) throw new UsageError(`lowWater (${low}) must not exceed highWater (${high})`);
  const room = budget - pageReserve;
  return {
    budget,
    keep_recent: intOption(options.keepRecent, 10, 'keepRecent', 0),
    fold_threshold: intOption(options.foldThreshold, 256, 'foldThreshold', 0),
    high_water_tokens: Math.floor(high * room),
    low_water_tokens: Math.floor(low * room),
    page_reserve: pageReserve,
    tokenizer: engine.tokenizer.name,
    summarizer: options.summarize ? 'custom' : 'default',
    live_overflow: liveOverflow(options.liveOverflow),
    step_ids: 'turns',
    live_task: 'kept',
    pack_budget: 'strict',
    record_fields: 'bounded',
    log_chain: 'sha256',
    log_head: 'sha256',
  };
}

function liveOverflow(value: unknown): LiveOverflow {
  if (value === undefined) return 'excerpt';
  if (value === 'excerpt' || value === 'send-whole') return value;
  throw new UsageError(`liveOverflow must be 'excerpt' or 'send-whole', got ${shown(value)}`);
}

/**
 * The deterministic default summary of a turn, as the session folds it.
 *
 * @example
 * groupTurns(session.history()).map(defaultSummary);
 * // ['user: Which port does PostgreSQL use?', 'assistant: Port 5433, see the config.']
 */
export function defaultSummary(turn: Turn): string {
  return summarizeTurn(turn.messages.map(toPlainMessage));
}
