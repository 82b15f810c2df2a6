import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { runHook } from '../adapters/claude-code/run-hook.js';

/** Writes Claude Code transcript rows (the real field layout) for a synthetic session. */
class SyntheticTranscript {
  #n = 0;
  #parent: string | null = null;
  readonly rows: string[] = [];

  constructor(
    readonly sessionId: string,
    readonly block = 0,
  ) {}

  #row(type: string, extra: Record<string, unknown>): void {
    this.#n++;
    const uuid = `00000000-0000-4000-${String(8000 + this.block)}-${String(this.#n).padStart(12, '0')}`;
    this.rows.push(
      JSON.stringify({
        parentUuid: this.#parent,
        isSidechain: false,
        type,
        uuid,
        sessionId: this.sessionId,
        timestamp: '2026-03-01T10:00:00.000Z',
        ...extra,
      }),
    );
    this.#parent = uuid;
  }

  user(text: string): void {
    this.#row('user', { message: { role: 'user', content: text } });
  }

  /** One assistant message with one Bash call and its result. */
  bash(i: number, command: string, result: string): void {
    const id = `msg_${String(i).padStart(8, '0')}`;
    const toolId = `toolu_${id}`;
    this.#row('assistant', {
      message: {
        id,
        role: 'assistant',
        type: 'message',
        content: [{ type: 'tool_use', id: toolId, name: 'Bash', input: { command } }],
      },
    });
    this.#row('user', {
      message: {
        role: 'user',
        content: [{ tool_use_id: toolId, type: 'tool_result', content: result }],
      },
    });
  }

  compact(): void {
    this.#row('system', { subtype: 'compact_boundary', content: 'Conversation compacted' });
    this.#row('user', {
      message: { role: 'user', content: 'This session is being continued. Summary: work went on.' },
      isCompactSummary: true,
    });
  }
}

const MODULES = ['lexer', 'parser', 'renderer', 'scheduler', 'cache', 'router', 'mailer'];

function turn(t: SyntheticTranscript, i: number): void {
  const mod = MODULES[i % MODULES.length]!;
  t.user(`check the ${mod} module, pass ${i}`);
  const lines = Array.from(
    { length: 30 },
    (_, j) => `${mod}/${j}.ts: ${(i * 31 + j) % 97} checks ok in ${(i + j) % 13}ms`,
  );
  const report = reportOf(i);
  t.bash(
    i,
    `npm test -- ${mod} --pass ${i} --junit ${report}`,
    `${lines.join('\n')}\n${passed(i)} tests passed\njunit report written to ${report}`,
  );
}

/** The report path turn `i` writes (only that turn holds it). */
const reportOf = (i: number) =>
  `reports/${MODULES[i % MODULES.length]}/pass-${String(i).padStart(4, '0')}.xml`;

/** The count turn `i` reports (what the bench's prompt asks for). */
const passed = (i: number) => (i * 7) % 500;

/** The archived turn the bench's prompt asks about (before the compaction in the middle). */
const ASKED = 23;

/** The bench's prompt after each further exchange, and the archived answer it must page in. */
const PROMPT = `how many tests passed in ${reportOf(ASKED)}?`;
const ANSWER = `${passed(ASKED)} tests passed`;

/**
 * A run that pages nothing in skips the reads a real prompt pays for: each run must hand
 * Claude Code the archived answer, or the figure is not the one it claims to be.
 */
function answered(context: string | undefined, how: string): void {
  if (!context?.includes(ANSWER)) {
    throw new Error(
      `hook bench: the ${how} run did not page in "${ANSWER}" (step of pass ${ASKED})`,
    );
  }
}

/** Figures of the hook on a long transcript. */
export interface HookBench {
  turns: number;
  /** Catching up on the whole transcript (several runs of at most 400 turns). */
  catch_up_ms: number;
  /** In-process `user-prompt-submit` after one more exchange (warm state file): fold, scan, page in. */
  warm_prompt_ms: { p50: number; max: number };
  /**
   * The same, after one more exchange, through `contextfold hook user-prompt-submit` as a fresh
   * process (what Claude Code runs), handed to the hook server the first run started.
   */
  fresh_process_prompt_ms: { p50: number; max: number };
  /** The same with `CONTEXTFOLD_HOOK_SERVER=0`: the whole run in the fresh process. */
  fresh_process_no_server_ms: { p50: number; max: number };
}

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))]! * 10) / 10;
};

/** Writes the long session's transcript, a compaction in the middle, and returns its path. */
function writeTranscript(root: string, exchanges: number): string {
  const t = new SyntheticTranscript('bench-session');
  const half = Math.floor(exchanges / 2);
  for (let i = 0; i < exchanges; i++) {
    if (i === half) t.compact();
    turn(t, i);
  }
  const path = join(root, 'transcript.jsonl');
  writeFileSync(path, `${t.rows.join('\n')}\n`);
  return path;
}

/** The hook's input for the bench session (the prompt added per run). */
interface SessionInput {
  session_id: string;
  transcript_path: string;
  cwd: string;
}

/**
 * Prompts on the session once it is caught up on. Each run, in process or fresh, first finds one
 * more exchange in the transcript (what Claude Code appended since the last prompt) and folds
 * it, as on every real prompt.
 */
class PromptRuns {
  #appended = 0;
  readonly #cli = fileURLToPath(new URL('../cli/bin.js', import.meta.url));

  constructor(
    private readonly session: {
      exchanges: number;
      baseDir: string;
      input: SessionInput;
      /** The fresh processes' environment (their hook server's socket under its TMPDIR). */
      env: NodeJS.ProcessEnv;
    },
  ) {}

  #oneMoreExchange(): void {
    this.#appended++;
    const extra = new SyntheticTranscript('bench-session', this.#appended);
    turn(extra, this.session.exchanges + this.#appended);
    appendFileSync(this.session.input.transcript_path, `${extra.rows.join('\n')}\n`);
  }

  /**
   * `contextfold hook user-prompt-submit` as a fresh process (what Claude Code runs): handed to
   * the hook server (`hook-server`), or run whole in the process (`fresh-process`). Its ms.
   */
  fresh(way: 'hook-server' | 'fresh-process'): number {
    const { baseDir, input, env } = this.session;
    this.#oneMoreExchange();
    const f = performance.now();
    const r = spawnSync(
      process.execPath,
      [this.#cli, '--dir', baseDir, 'hook', 'user-prompt-submit'],
      {
        input: JSON.stringify({ ...input, prompt: PROMPT, hook_event_name: 'UserPromptSubmit' }),
        encoding: 'utf8',
        env: way === 'hook-server' ? env : { ...env, CONTEXTFOLD_HOOK_SERVER: '0' },
      },
    );
    const ms = performance.now() - f;
    if (r.status !== 0) throw new Error(`hook failed: ${r.stderr}`);
    answered(
      r.stdout === '' ? undefined : JSON.parse(r.stdout).hookSpecificOutput?.additionalContext,
      way,
    );
    return ms;
  }

  /** `runHook` in this process (warm state file): fold, scan, page in. Its ms. */
  async inProcess(): Promise<number> {
    this.#oneMoreExchange();
    const s = performance.now();
    const r = await runHook({
      event: 'user-prompt-submit',
      input: { ...this.session.input, prompt: PROMPT },
      baseDir: this.session.baseDir,
    });
    const ms = performance.now() - s;
    answered(r.output?.hookSpecificOutput?.additionalContext, 'in-process');
    return ms;
  }
}

/** Waits for the hook server's socket under `tmp` (at most 10 s). */
async function serverListening(tmp: string): Promise<void> {
  const socketAt = Date.now() + 10_000;
  while (!readdirSync(tmp, { recursive: true }).some((n) => String(n).endsWith('.sock'))) {
    if (Date.now() > socketAt) {
      throw new Error(
        `hook bench: the hook server did not start (its socket goes under ${tmp}; if that path is long, a socket path over 103 bytes cannot be bound: set a shorter TMPDIR)`,
      );
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The hook on a long session: a synthetic Claude Code transcript of about `exchanges` × 2 turns
 * with a compaction in the middle is caught up on, then each further exchange is followed by a
 * prompt about an archived turn, in process (warm) and as the CLI a real hook runs.
 *
 * @example
 * const r = await benchHook({ exchanges: 1000, work: '/tmp' }); // ≈ 2,000 turns
 */
export async function benchHook(options: { exchanges: number; work: string }): Promise<HookBench> {
  const root = mkdtempSync(join(options.work, 'hook-'));
  try {
    const path = writeTranscript(root, options.exchanges);
    const baseDir = join(root, '.contextfold');
    const input = { session_id: 'bench-session', transcript_path: path, cwd: root };
    const t0 = performance.now();
    for (let run = 0; run < 100; run++) {
      const r = await runHook({
        event: 'user-prompt-submit',
        input: { ...input, prompt: PROMPT },
        baseDir,
      });
      if (!r.ingest.more) break;
    }
    const catchUp = performance.now() - t0;
    // The hook server's socket lives under TMPDIR: inside root, so removing root stops it.
    const tmp = join(root, 'tmp');
    mkdirSync(tmp);
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: tmp };
    delete env.CONTEXTFOLD_HOOK_SERVER;
    const runs = new PromptRuns({ exchanges: options.exchanges, baseDir, input, env });
    // The first prompt starts the server (and runs in its own process): not a served figure.
    runs.fresh('hook-server');
    await serverListening(tmp);
    // One way at a time, as a real session runs (a server's open store is not disturbed by
    // another writer between its runs).
    const viaServer: number[] = [];
    const alone: number[] = [];
    const warm: number[] = [];
    for (let k = 0; k < 8; k++) viaServer.push(runs.fresh('hook-server'));
    for (let k = 0; k < 8; k++) alone.push(runs.fresh('fresh-process'));
    for (let k = 0; k < 8; k++) warm.push(await runs.inProcess());
    return {
      turns: options.exchanges * 2 + 1,
      catch_up_ms: Math.round(catchUp),
      warm_prompt_ms: { p50: q(warm, 0.5), max: q(warm, 1) },
      fresh_process_prompt_ms: { p50: q(viaServer, 0.5), max: q(viaServer, 1) },
      fresh_process_no_server_ms: { p50: q(alone, 0.5), max: q(alone, 1) },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
