import { ContextFold } from '../../engine/context-fold.js';
import type { IndexWarning, OpenOptions } from '../../engine/types.js';
import { isContextFoldError, LockTimeoutError, UsageError } from '../../protocol/errors.js';
import { type ArchivedContext, archivedContext } from './archived-context.js';
import { hookFailureLine, oneLine, refusesStore } from './hook-failure.js';
import { CLAUDE_EVENT_NAMES, type HookEvent, type HookInput } from './hook-input.js';
import {
  type IngestResult,
  ingestedSoFar,
  ingestTranscript,
  type SkippedRow,
  stateLockPath,
  uuidLogPath,
} from './ingest.js';
import { scannedPrompt } from './scanned-prompt.js';
import { sessionPaths } from './session-paths.js';

/** New turns one hook run folds at most; a long backlog is caught up over several runs. */
export const DEFAULT_MAX_TURNS_PER_RUN = 400;

/**
 * How long a run waits while another run of the session ingests (the hook server's run, when its
 * client stopped waiting for it; a second window): short enough to answer within Claude Code's
 * timeouts (`HOOK_TIMEOUTS`) after the client's own wait for the server.
 */
export const INGEST_LOCK_TIMEOUT_MS: Record<HookEvent, number> = {
  'user-prompt-submit': 2_000,
  'session-start': 2_000,
  'pre-compact': 20_000,
};

/**
 * How long a run waits for the store's own write lock (another writer: a `contextfold compact`
 * or `reindex` run by hand, a stopped process) before it reports a `LockTimeoutError`: the
 * engine's default (30 s) is past the timeouts `contextfold install` gives the hooks (15 s for a
 * prompt), after which Claude Code would end the run before it told the user anything. One value
 * for every event, so a hook server keeps one engine per store.
 */
export const HOOK_STORE_LOCK_TIMEOUT_MS = 5_000;

/** Options of {@link runHook}. */
export interface RunHookOptions {
  event: HookEvent;
  input: HookInput;
  /** Base store directory (e.g. `<project>/.contextfold`); each session gets a store below it. */
  baseDir: string;
  /** Engine options for the session store. The token counter defaults to `reference` (fast start). */
  engine?: Omit<OpenOptions, 'dir'>;
  maxTurnsPerRun?: number;
  /** Wait for another run of the session this long (default {@link INGEST_LOCK_TIMEOUT_MS}). */
  lockTimeoutMs?: number;
  /**
   * Engines kept open between runs (a long-lived process: the hook server passes its
   * `HookEngines`): `get` returns the open engine for the options, and the run leaves it open.
   * Without it, each run opens the session store and closes it again.
   */
  engines?: { get(options: OpenOptions): Promise<ContextFold> };
}

/** How many session stores {@link HookEngines} keeps open at most (the least recent closes). */
const MAX_OPEN_ENGINES = 4;

/**
 * Session engines kept open across hook runs of one process, so a run finds its store's index
 * open and its read caches warm. The engine of a store follows what other processes write to
 * it, as any long-lived engine does. A run's `onWarning` is the one told while it runs.
 *
 * @example
 * const engines = new HookEngines();
 * await runHook({ event, input, baseDir, engines });
 * await engines.closeAll();
 */
export class HookEngines {
  readonly #open = new Map<string, Promise<ContextFold>>();
  #warn: ((w: IndexWarning) => void) | undefined;

  /** The engine for these options, opened on first use. */
  async get(options: OpenOptions): Promise<ContextFold> {
    this.#warn = options.onWarning;
    const key = JSON.stringify(options, (k, v) => (k === 'onWarning' ? undefined : v));
    let engine = this.#open.get(key);
    if (engine) {
      this.#open.delete(key); // re-inserted last: most recently used
    } else {
      engine = ContextFold.open({ ...options, onWarning: (w) => this.#warn?.(w) });
      engine.catch(() => this.#open.delete(key));
    }
    this.#open.set(key, engine);
    for (const [k, old] of this.#open) {
      if (this.#open.size <= MAX_OPEN_ENGINES) break;
      this.#open.delete(k);
      void old.then((e) => e.close({ compact: false })).catch(() => {});
    }
    return engine;
  }

  /** Closes every engine (without compacting, as a prompt run's own close does). */
  async closeAll(): Promise<void> {
    const all = [...this.#open.values()];
    this.#open.clear();
    await Promise.allSettled(all.map(async (e) => (await e).close({ compact: false })));
  }
}

/**
 * The JSON a hook prints for Claude Code: `hookSpecificOutput.additionalContext` goes to the
 * model, `systemMessage` is a warning Claude Code shows the user (never the model).
 */
export interface HookOutput {
  hookSpecificOutput?: { hookEventName: string; additionalContext: string };
  systemMessage?: string;
}

/**
 * The output with `messages` added to its `systemMessage` (one line each, a line already there
 * not again), or a new output that is only the warning. No messages: the output as it was.
 *
 * @example
 * withSystemMessage(null, ['contextfold: archived step 3 was not paged in: ...']);
 * // { systemMessage: 'contextfold: archived step 3 was not paged in: ...' }
 */
export function withSystemMessage(
  output: HookOutput | null,
  messages: readonly string[],
): HookOutput | null {
  if (messages.length === 0) return output;
  const all = new Set([...(output?.systemMessage?.split('\n') ?? []), ...messages]);
  return { ...output, systemMessage: [...all].join('\n') };
}

/** What a hook run did. */
export interface HookOutcome {
  /** Print this on stdout (null: print nothing). */
  output: HookOutput | null;
  store: string;
  ingest: IngestResult;
  /** Steps before this one are archived (gone from the live context by compaction). */
  archived_before: number;
  context: ArchivedContext | null;
  /** One line for the user (stderr) that is not an error, e.g. a transcript not created yet. */
  notice: string | null;
}

/**
 * What a missing transcript means. A new session's file does not exist until Claude Code
 * records the first prompt (its SessionStart and first UserPromptSubmit hooks run before), so
 * then it is a `notice` (stderr only). A transcript that was read before and is gone, or a
 * compaction with no transcript to archive, is a `failure`: the user's `systemMessage` (the run
 * still pages in what is archived), so the archive never stops growing silently.
 */
function missingTranscript(
  event: HookEvent,
  ingest: IngestResult,
  path: string,
): { notice: string | null; failure: string | null } {
  if (ingest.transcript === 'read') return { notice: null, failure: null };
  if (event === 'pre-compact' || ingest.previouslyRead) {
    const error = new UsageError(
      `transcript not found: ${path}; ${ingest.previouslyRead ? 'it was read before and is gone' : 'nothing can be archived before this compaction'} (contextfold hook ${event})`,
      { path },
    );
    return { notice: null, failure: hookFailureLine(error) };
  }
  return {
    notice: `transcript not found yet: ${path} (a new session; nothing to archive until Claude Code writes it)`,
    failure: null,
  };
}

/** Skipped rows a run names at most (then how many more). */
const MAX_SKIPPED_LINES = 3;

/**
 * The `systemMessage` lines for the transcript rows a run skipped (each reported once: the hook
 * state keeps them), at most {@link MAX_SKIPPED_LINES} and then how many more.
 *
 * @example
 * skippedRowLines('/t.jsonl', [{ offset: 120, line: 3, sha256: '…', reason: 'not valid JSON (…)' }]);
 * // ['contextfold: skipped line 3 of /t.jsonl (byte 120): not valid JSON (…); ...']
 */
export function skippedRowLines(path: string, rows: readonly SkippedRow[]): string[] {
  const lines = rows
    .slice(0, MAX_SKIPPED_LINES)
    .map(
      (r) =>
        `contextfold: skipped line ${r.line} of ${path} (byte ${r.offset}): ${oneLine(r.reason)}; that row is not archived (Claude Code or the machine stopped while writing it, or this reader does not understand it); the rows after it are archived`,
    );
  if (rows.length > MAX_SKIPPED_LINES) {
    lines.push(
      `contextfold: skipped ${rows.length - MAX_SKIPPED_LINES} more line${rows.length - MAX_SKIPPED_LINES === 1 ? '' : 's'} of ${path} (their line numbers and byte offsets are in the hook state file)`,
    );
  }
  return lines;
}

/**
 * What a run that folded nothing still did, said after it by event: a prompt is answered from
 * the archive; a compaction goes ahead without this run's folds (the transcript keeps its
 * turns: a later run folds them); a session start needs nothing more said.
 */
const SKIPPED_RUN: Record<HookEvent, string> = {
  'user-prompt-submit': ' and answered from what was already archived',
  'session-start': '',
  'pre-compact': '; the compaction goes ahead without it',
};

/**
 * Ingests the session's new turns. When that fails but the store and the hook's state are sound
 * (another run of the session holds its state longer than the run may wait, the store's write
 * lock stays taken, the transcript is unreadable, a turn is refused, the uuid log is refused),
 * what is folded already and the message that says what was skipped (`skipped`). An error that
 * refuses the store or the state file ({@link refusesStore}) is thrown: nothing is paged in.
 */
async function ingestOrSkip(
  engine: ContextFold,
  options: RunHookOptions,
  statePath: string,
  compacting: boolean,
): Promise<{ ingest: IngestResult; skipped: string | null }> {
  const transcriptPath = options.input.transcript_path;
  const lockTimeoutMs = options.lockTimeoutMs ?? INGEST_LOCK_TIMEOUT_MS[options.event];
  try {
    const ingest = await ingestTranscript(engine, {
      transcriptPath,
      statePath,
      mode: compacting ? 'compact' : 'prompt',
      maxTurns: options.maxTurnsPerRun ?? DEFAULT_MAX_TURNS_PER_RUN,
      lockTimeoutMs,
    });
    return { ingest, skipped: null };
  } catch (e) {
    // A refused uuid log is the hook's own record of what was read, not the store: the store
    // still pages in (its records are verified one by one). Anything else refused is thrown.
    const logRefused = isContextFoldError(e) && e.details.path === uuidLogPath(statePath);
    if (refusesStore(e) && !logRefused) throw e;
    const ingest = ingestedSoFar({ transcriptPath, statePath });
    if (e instanceof LockTimeoutError && e.details.path === stateLockPath(statePath)) {
      return {
        ingest,
        skipped: `contextfold: another hook run of this session was still reading its transcript after ${lockTimeoutMs / 1000} s, so this run folded nothing (its turns are folded by that run or the next one)${SKIPPED_RUN[options.event]}`,
      };
    }
    return {
      ingest,
      skipped: `${hookFailureLine(e)}; this run folded nothing (the next run tries again)${SKIPPED_RUN[options.event]}`,
    };
  }
}

/**
 * Runs one Claude Code hook event against the session's store:
 * - `user-prompt-submit`: ingest new turns, scan the prompt, return the verified pages from
 *   before the last compaction (at most 8 KB) as `additionalContext`;
 * - `pre-compact`: fold everything that is complete, so the compaction loses nothing;
 * - `session-start`: ingest and, when part of the session is archived, tell the model so.
 *
 * @example
 * const out = await runHook({ event: 'user-prompt-submit', input, baseDir: '/repo/.contextfold' });
 * if (out.output) process.stdout.write(JSON.stringify(out.output));
 */
export async function runHook(options: RunHookOptions): Promise<HookOutcome> {
  const { event, input } = options;
  const paths = sessionPaths(options.baseDir, input.session_id);
  // The best retrieval (ranked) pages in from archived turns; `options.engine` can choose
  // `retrieval: 'reference'` (the IPCF RGSC). The reference token counter needs no vocabulary
  // load in this fresh process.
  const openOptions: OpenOptions = {
    tokenizer: 'reference',
    retrieval: 'ranked',
    // One process per prompt: keep the journal short (it is re-read on every open), compacting
    // geometrically into the snapshot (one JSON.parse instead of a checksum per line).
    journalCompactThreshold: 256,
    lockTimeoutMs: HOOK_STORE_LOCK_TIMEOUT_MS,
    sessionId: input.session_id,
    ...options.engine,
    dir: paths.storeDir,
  };
  const engine = options.engines
    ? await options.engines.get(openOptions)
    : await ContextFold.open(openOptions);
  const compacting =
    event === 'pre-compact' || (event === 'session-start' && input.source === 'compact');
  try {
    const { ingest, skipped } = await ingestOrSkip(engine, options, paths.statePath, compacting);
    const archivedBefore = ingest.compactions.at(-1) ?? 0;
    const missing = missingTranscript(event, ingest, input.transcript_path);
    const outcome: HookOutcome = {
      output: null,
      store: paths.storeDir,
      ingest,
      archived_before: archivedBefore,
      context: null,
      notice: missing.notice,
    };
    const say = (text: string): HookOutput => ({
      hookSpecificOutput: { hookEventName: CLAUDE_EVENT_NAMES[event], additionalContext: text },
    });
    if (event === 'user-prompt-submit') {
      const scanned = scannedPrompt(input.prompt ?? '');
      outcome.context = await archivedContext(engine, {
        prompt: scanned.text,
        archivedBefore,
        mode: engine.retrieval,
        summaries: ingest.compactions,
      });
      if (outcome.context.text !== null) outcome.output = say(outcome.context.text);
      // The model reads that a record was refused; the user is told too (tampered or missing).
      outcome.output = withSystemMessage(outcome.output, [
        ...(scanned.cut
          ? [
              `contextfold: this prompt has ${scanned.cut.chars.toLocaleString('en-US')} characters; the archive was searched for its first and last lines only (${scanned.cut.scanned.toLocaleString('en-US')} characters), to answer within the hook's time limit`,
            ]
          : []),
        ...outcome.context.failures.map(
          (f) =>
            `contextfold: archived step ${f.step_id} was selected for this prompt but not paged in: ${f.error}: ${f.message}`,
        ),
      ]);
    } else if (event === 'session-start' && archivedBefore > 0) {
      outcome.output = say(
        `contextfold: turns 0–${archivedBefore - 1} of this session are archived verbatim (hash-verified) in ${paths.storeDir}. Records relevant to a prompt are paged in automatically with it, labelled as archived data.`,
      );
    }
    outcome.output = withSystemMessage(outcome.output, [
      ...skippedRowLines(input.transcript_path, ingest.skippedRows),
      ...[skipped, missing.failure].filter((m): m is string => m !== null),
    ]);
    return outcome;
  } finally {
    if (!options.engines) await engine.close({ compact: event === 'pre-compact' });
    else if (event === 'pre-compact') await engine.compact();
  }
}
