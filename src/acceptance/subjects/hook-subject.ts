import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLAUDE_CODE_ACCEPTANCE } from '../../adapters/claude-code/acceptance.js';
import type { CaseInputDoc } from '../case-schema.js';
import { ClaudeTranscript } from '../claude-transcript.js';
import type {
  AdapterSubject,
  CallObservation,
  SubjectCase,
  SubjectCaseOptions,
} from '../subject.js';
import { MODEL_REPLY, WARMUP_PROMPT } from '../subject.js';
import { childEnv, type ProcessSubjectOptions, runCli } from './cli-process.js';

/** The session id Claude Code would pass for a case session (a plain id). */
const sessionIdOf = (name: string) => `cc-${name}`;

const REFUSAL_RE = /archived step (\d+) was selected but not paged in: ([A-Za-z]+)/g;

class HookCase implements SubjectCase {
  private readonly transcripts = new Map<string, ClaudeTranscript>();
  private readonly project: string;
  readonly writeRoots: readonly string[];

  constructor(
    private readonly o: SubjectCaseOptions,
    private readonly env: Record<string, string>,
  ) {
    this.project = join(o.workDir, 'project');
    this.writeRoots = [join(this.project, '.contextfold'), join(o.workDir, 'cache')];
  }

  storeDir(session: string): string {
    return join(this.project, '.contextfold', 'claude-code', sessionIdOf(session));
  }

  private transcriptPath(session: string): string {
    return join(this.o.workDir, 'claude', `${sessionIdOf(session)}.jsonl`);
  }

  async setup(): Promise<CallObservation[]> {
    mkdirSync(join(this.o.workDir, 'claude'), { recursive: true });
    mkdirSync(this.project, { recursive: true });
    const out: CallObservation[] = [];
    for (const [name, s] of Object.entries(this.o.input.sessions)) {
      const t = new ClaudeTranscript(sessionIdOf(name)).history(s.history);
      this.transcripts.set(name, t);
      writeFileSync(this.transcriptPath(name), t.text());
      out.push(await this.call(name, WARMUP_PROMPT));
    }
    return out;
  }

  /** Claude Code runs the hook on submit, then writes the prompt and the answer to the transcript. */
  async call(session: string, prompt: string): Promise<CallObservation> {
    const input = {
      session_id: sessionIdOf(session),
      transcript_path: this.transcriptPath(session),
      cwd: this.project,
      hook_event_name: 'UserPromptSubmit',
      prompt,
    };
    const r = await runCli(
      ['hook', 'user-prompt-submit'],
      JSON.stringify(input),
      this.env,
      this.project,
    );
    const t = this.transcripts.get(session)!;
    const from = t.rows.length;
    t.user(prompt).assistant(MODEL_REPLY);
    appendFileSync(this.transcriptPath(session), t.text(from));
    let context = '';
    let blocked = false;
    if (r.status === 0 && r.stdout.trim() !== '') {
      const out = JSON.parse(r.stdout) as {
        decision?: string;
        hookSpecificOutput?: { additionalContext?: string };
      };
      context = out.hookSpecificOutput?.additionalContext ?? '';
      blocked = out.decision === 'block';
    }
    // Claude Code blocks the prompt on exit 2 or decision "block"; any other failure is shown
    // to the user and the prompt goes on without the hook's context.
    const proceeded = r.status !== 2 && !blocked;
    const refused = [...context.matchAll(REFUSAL_RE)].map((m) => ({
      step_id: Number(m[1]),
      error: m[2]!,
    }));
    const error =
      r.status === 0 ? undefined : `hook exited ${r.status}: ${r.stderr.trim().split('\n')[0]}`;
    return { proceeded, modelInput: context, refused, ...(error ? { error } : {}) };
  }

  async close(): Promise<void> {}
}

/**
 * The Claude Code hook as Claude Code runs it: `contextfold hook user-prompt-submit` with the
 * hook input JSON on stdin and `hookSpecificOutput.additionalContext` read from stdout, over a
 * transcript file written in Claude Code's row layout (compacted turns, the compaction, live
 * turns). It cannot evict (CONF-07 is outside its declared set) and declares
 * `record_in_live_context` on inputs that have an archived record in the live context.
 */
export class HookSubject implements AdapterSubject {
  readonly name = 'claude-code-hook';
  readonly entryPoint = 'node dist/cli/bin.js hook user-prompt-submit (stdin JSON → stdout JSON)';
  readonly acceptance = CLAUDE_CODE_ACCEPTANCE;

  constructor(private readonly options: ProcessSubjectOptions = {}) {}

  /**
   * `record_in_live_context` applies when a record is in Claude Code's live context: an archived
   * turn after the last compaction, or a page an earlier call of the same session added (the
   * hook cannot evict it, so it stays in the context).
   */
  declare(input: CaseInputDoc): string[] {
    const liveTurn = Object.values(input.sessions).some((s) =>
      s.history.some((t) => t.archived === true && t.host_context === 'live'),
    );
    const perSession = new Map<string, number>();
    for (const k of input.calls) perSession.set(k.session, (perSession.get(k.session) ?? 0) + 1);
    const earlierPages = [...perSession.values()].some((n) => n > 1);
    return liveTurn || earlierPages ? ['record_in_live_context'] : [];
  }

  async unavailable(): Promise<string | null> {
    return null;
  }

  async open(o: SubjectCaseOptions): Promise<SubjectCase> {
    return new HookCase(o, childEnv(o.workDir, this.options.env));
  }
}
