import { isAbsolute, resolve } from 'node:path';
import { hookFailureLine, hookWarningLine } from '../adapters/claude-code/hook-failure.js';
import { HOOK_EVENTS, type HookEvent, parseHookInput } from '../adapters/claude-code/hook-input.js';
import {
  type HookEngines,
  type HookOutput,
  runHook,
  withSystemMessage,
} from '../adapters/claude-code/run-hook.js';
import type { OpenOptions } from '../engine/types.js';
import { UsageError } from '../protocol/errors.js';
import { isPgUrl } from '../store/pg/pg-url.js';
import { reportError } from './context.js';
import { checkEngineFlags } from './engine-options.js';

/**
 * One `contextfold hook <EVENT>` invocation as data: what the CLI parsed and read, so the same
 * run can happen in the process Claude Code started or in the hook server it hands it to.
 */
export interface HookRequest {
  v: 1;
  event: string;
  /** The hook input JSON, as read from stdin. */
  stdin: string;
  /** `--dir` as given (relative: to `projectDir`, else to the hook input's cwd, else to `cwd`). */
  dir?: string;
  tokenizer?: string;
  retrieval?: string;
  /** False for `--no-redact`. */
  redact: boolean;
  /** The working directory of the process Claude Code started. */
  cwd: string;
  /**
   * `$CLAUDE_PROJECT_DIR` of that process: the directory Claude Code was started in, which stays
   * put when the session's working directory follows a `cd` of the model.
   */
  projectDir?: string;
}

/** `projectDir` of a request from the environment of the process Claude Code started. */
export function projectDirOf(env: NodeJS.ProcessEnv): { projectDir?: string } {
  return env.CLAUDE_PROJECT_DIR ? { projectDir: env.CLAUDE_PROJECT_DIR } : {};
}

/** Where a hook run writes: Claude Code reads stdout as the hook's output, stderr as its notice. */
export interface HookIo {
  out(text: string): void;
  err(text: string): void;
}

/** This process's own stdout and stderr. */
export const processIo: HookIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/**
 * The engine options a request asks for; a bad value is a UsageError. A store warning is one
 * line (the message's first line, bounded, and its path) on stderr, kept in `warnings` for the
 * user's `systemMessage`; a warning told before in the run is not told again.
 */
function engineOf(r: HookRequest, io: HookIo, warnings: string[]): Omit<OpenOptions, 'dir'> {
  const { tokenizer, retrieval } = checkEngineFlags(r);
  const engine: Omit<OpenOptions, 'dir'> = {
    onWarning: (w) => {
      const line = hookWarningLine(w);
      if (warnings.includes(line)) return;
      io.err(`${line}\n`);
      warnings.push(line);
    },
  };
  if (tokenizer !== undefined) engine.tokenizer = tokenizer;
  if (retrieval !== undefined) engine.retrieval = retrieval;
  if (!r.redact) engine.redact = false;
  return engine;
}

/**
 * Runs one hook invocation and returns its exit code (`engines`: keep session stores open across
 * invocations, in a long-lived process).
 *
 * - An invocation error, the installer's to fix and seen by running the command by hand (an
 *   unknown event, hook input that is not Claude Code's, a bad option value, an empty `--dir` or
 *   a database URL for it): one line on stderr, nothing on stdout, exit 1.
 * - A failure once the input is valid (the store or a record refused, a lock that stays taken,
 *   the transcript unreadable, an unexpected error): exit 0, because Claude Code reads a hook's
 *   JSON only then and shows the stderr of any other exit code only in its verbose mode. The
 *   one JSON object on stdout has a `systemMessage` line naming the error code and the path,
 *   which Claude Code shows the user; a run that did not reach the store's records adds no
 *   `additionalContext` (nothing is paged in from a refused store).
 *
 * Never exit 2 (Claude Code would block the prompt), never an error on stdout but in that JSON.
 * Warnings of a run that goes on (`warnings`: the caller's, e.g. a hook server that did not
 * answer in time; store warnings; a refused page) are lines on stderr too, and lines of the
 * `systemMessage` (stderr of a run that exits 0 Claude Code shows nobody), each once.
 *
 * @example
 * const code = await runHookRequest(
 *   { v: 1, event: 'session-start', stdin: '{"session_id":"s","transcript_path":"/t.jsonl"}', redact: true, cwd: '/repo' },
 *   processIo,
 * );
 */
export async function runHookRequest(
  r: HookRequest,
  io: HookIo,
  engines?: HookEngines,
  warnings: readonly string[] = [],
): Promise<number> {
  const told = [...new Set(warnings)];
  let run: () => Promise<HookOutput | null>;
  try {
    if (!HOOK_EVENTS.includes(r.event as HookEvent)) {
      throw new UsageError(`unknown hook event '${r.event}': use ${HOOK_EVENTS.join(', ')}`);
    }
    const event = r.event as HookEvent;
    // Relative paths are the caller's (`r.cwd`), never those of the process running this: the
    // hook server's working directory is that of whichever project started it.
    const parsed = parseHookInput(r.stdin, event);
    const input = { ...parsed, transcript_path: resolve(r.cwd, parsed.transcript_path) };
    // An empty --dir (an unset shell variable in the hook command) would be the project itself.
    if (r.dir === '') throw new UsageError('--dir needs a directory (it was empty)');
    const raw = r.dir ?? '.contextfold';
    if (isPgUrl(raw)) {
      throw new UsageError(
        `contextfold hook keeps each session's store in a directory, <dir>/claude-code/<session_id>/: --dir ${raw} is a database URL; give a directory`,
      );
    }
    // The project's store, wherever the session has moved to since (`cd assets`): the hook
    // input's cwd follows the model's cd, so a store relative to it would be a second one.
    const base = r.projectDir || input.cwd || '.';
    const baseDir = isAbsolute(raw) ? raw : resolve(r.cwd, base, raw);
    const engine = engineOf(r, io, told);
    run = async () => {
      const outcome = await runHook({
        event,
        input,
        baseDir,
        engine,
        ...(engines ? { engines } : {}),
      });
      if (outcome.notice) io.err(`contextfold: ${outcome.notice}\n`);
      return outcome.output;
    };
  } catch (e) {
    reportError(e, false, io.err);
    return 1;
  }
  let output: HookOutput | null;
  try {
    output = await run();
  } catch (e) {
    output = { systemMessage: hookFailureLine(e) };
  }
  for (const m of new Set(output?.systemMessage?.split('\n'))) {
    if (!told.includes(m)) io.err(`${m}\n`);
  }
  output = withSystemMessage(output, told);
  if (output) io.out(`${JSON.stringify(output)}\n`);
  return 0;
}
