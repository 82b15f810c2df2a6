import type { Command } from 'commander';
import { ContextFold } from '../../engine/context-fold.js';
import { loadHistoryFile } from '../../import/import-file.js';
import { importTurns } from '../../import/import-turns.js';
import { sourceName } from '../../import/read-source.js';
import { IMPORT_FORMATS, type ImportFormat } from '../../import/turn.js';
import {
  type CodedErrorClass,
  isContextFoldError,
  isStepConflictError,
  StepConflictError,
  UsageError,
} from '../../protocol/errors.js';
import { emit, globals } from '../context.js';
import { engineOptions, NO_REDACT_FLAG, NO_REDACT_HELP } from '../engine-options.js';
import { helpText } from '../help-text.js';
import { phasedProgress } from '../progress.js';
import { sayOnStop } from '../stop-signals.js';

/** The passes of an import, as its progress bars name them. */
const PHASES = { preparing: 'redacting', writing: 'importing' } as const;

interface ImportReport {
  file: string;
  format: ImportFormat;
  /** True when the format was told from the content (no --format). */
  format_detected: boolean;
  dir: string;
  session_id: string;
  turns: number;
  folded: number;
  already_folded: number;
  first_step: number | null;
  last_step: number | null;
  /** Steps of the transcript's last turns still open (a tool call without its result): not imported. */
  open_steps: number[];
  /** Steps whose text held a lone surrogate, stored as U+FFFD (see `ImportTurnsResult`). */
  lone_surrogate_steps: number[];
  /** Records of a type this version does not read, by type: not imported. */
  skipped_records: Record<string, number>;
}

const human = (r: ImportReport): string => {
  const steps = r.first_step === null ? 'no turns' : `steps ${r.first_step}–${r.last_step}`;
  const again = r.already_folded ? `, ${r.already_folded} already folded` : '';
  const format = r.format_detected ? `${r.format}, detected` : r.format;
  const lines = [
    `imported ${r.turns} turn(s) from ${sourceName(r.file)} (${format}): ${r.folded} folded${again}; ${steps}; session ${r.session_id} → ${r.dir}`,
  ];
  if (r.lone_surrogate_steps.length > 0) {
    lines.push(
      `step ${r.lone_surrogate_steps.join(', ')}: half an emoji (a lone surrogate, no UTF-8 form) stored as U+FFFD`,
    );
  }
  const skipped = Object.entries(r.skipped_records);
  if (skipped.length > 0) {
    const list = skipped.map(([type, n]) => `${type} (${n})`).join(', ');
    lines.push(`not imported: records of a type this version does not read: ${list}`);
  }
  if (r.open_steps.length > 0) {
    lines.push(
      `not imported: step ${r.open_steps.join(', ')}, still open (a tool call without its result); import the file again once the session has moved on to add it whole`,
    );
  }
  return lines.join('\n');
};

const HELP = helpText({
  notes: [
    'Formats:',
    '  claude-code  Claude Code session transcript JSONL (~/.claude/projects/<project>/<session>.jsonl)',
    '  codex        OpenAI Codex CLI session rollout JSONL (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)',
    '  openai       OpenAI Chat Completions messages: a JSON array or a request body {"messages": [...]}',
    '  anthropic    Anthropic Messages: a JSON array or a request body {"messages": [...]}',
    '  aider        aider chat history Markdown (.aider.chat.history.md)',
    '  swe-agent    SWE-agent trajectory (.traj): its "history" messages',
    '  turns        JSONL, one {"step_id", "role", "content"} a line',
    '',
    'Without --format the format is told from the content (aider and SWE-agent files by their',
    'chat start line and their history object); tool calls, roles and content blocks',
    "tell OpenAI from Anthropic messages; a file of plain text messages needs --format (Cline's",
    'api_conversation_history.json is --format anthropic).',
    'Step ids are turn positions in the history; a tool call and its result form one turn.',
    "FILE '-' reads standard input, gzip or plain, its format told from the content as a file's",
    '(or given with --format); re-importing means piping the same history again.',
    'The whole file is parsed before anything is written; re-importing the same file is a no-op,',
    'and re-importing a transcript that has grown adds its new turns. A last turn still open (a',
    'tool call without its result, as in a running session) is left out until it is complete.',
    'One store holds one conversation: import another session into its own --dir.',
    'An import stopped by Ctrl-C says how many turns it wrote (rounds of 1,024 are committed one',
    'by one); the same import again adds the rest.',
    "The session id (--session) defaults to the transcript's own session id for claude-code and codex.",
    '',
  ],
  examples: [
    'contextfold import ~/.claude/projects/-home-me-app/3f2a….jsonl',
    'contextfold import chat.json --format openai --session support-42 --json',
    'contextfold import .aider.chat.history.md',
    'ssh host cat run.jsonl.gz | contextfold import - --format turns',
  ],
});

/**
 * A step conflict on import is, almost always, another conversation in the same store (each
 * history numbers its turns from 0): say so, and what to do.
 */
function anotherConversation(e: unknown, file: string): unknown {
  if (!isStepConflictError(e)) return e;
  return new StepConflictError(
    `${e.message}. ${sourceName(file)} is not the history this store holds at that step: import each conversation into its own store (--dir)`,
    e.details,
  );
}

/**
 * What a stopped import leaves: the turns of the rounds committed before the signal (the first
 * `written`, in step order), and that importing the file again adds the rest.
 */
function interrupted(
  turns: readonly { step_id: number }[],
  written: number,
): { message: string; details: Record<string, unknown> } {
  const stored =
    written === 0
      ? 'nothing imported'
      : `steps ${turns[0]!.step_id}–${turns[written - 1]!.step_id} are in the store`;
  return {
    message: `import interrupted: ${written} of ${turns.length} turn(s) written (${stored}); the same import again adds the rest`,
    details: {
      turns: turns.length,
      written,
      first_step: written === 0 ? null : turns[0]!.step_id,
      last_step: written === 0 ? null : turns[written - 1]!.step_id,
    },
  };
}

/**
 * An error that stopped an import after some of its rounds were committed, saying so: those
 * turns stay in the store, and the same import again adds the rest once the cause is fixed.
 */
function afterPartialWrite(e: unknown, turns: readonly { step_id: number }[], written: number) {
  if (written === 0 || !isContextFoldError(e)) return e;
  const { details } = interrupted(turns, written);
  const partial = `The import stopped after ${written} of ${turns.length} turn(s) (steps ${details.first_step}–${details.last_step} are in the store); once that is fixed, the same import adds the rest`;
  const Class = e.constructor as CodedErrorClass;
  return new Class(
    `${e.message}. ${partial}`,
    { ...e.details, ...details },
    {
      cause: e,
    },
  );
}

/** `contextfold import`. */
export function register(program: Command): void {
  program
    .command('import')
    .argument('<FILE>', "history file, or '-' to read standard input; .gz files are read directly")
    .option(
      '--format <FORMAT>',
      `input format: ${IMPORT_FORMATS.join(' | ')} (default: told from the content)`,
    )
    .option(NO_REDACT_FLAG, NO_REDACT_HELP)
    .addHelpText('after', HELP)
    .action(async (file: string, opts: { format?: string }, cmd: Command) => {
      const g = globals(cmd);
      if (opts.format !== undefined && !IMPORT_FORMATS.includes(opts.format as ImportFormat)) {
        throw new UsageError(
          `--format must be one of ${IMPORT_FORMATS.join(', ')}, got '${opts.format}'`,
        );
      }
      const history = loadHistoryFile({
        file,
        ...(opts.format ? { format: opts.format as ImportFormat } : {}),
      });
      const options = engineOptions(cmd);
      const sessionGiven = cmd.getOptionValueSourceWithGlobals('session') === 'cli';
      const sessionId = !sessionGiven && history.sessionId ? history.sessionId : options.sessionId;
      const cf = await ContextFold.open({ ...options, sessionId });
      const bar = phasedProgress(PHASES);
      // Turns committed so far: the batch is written in rounds, each committed whole, in order.
      let written = 0;
      const forget = sayOnStop(() => {
        bar.done();
        return interrupted(history.turns, written);
      }, g.json);
      try {
        const r = await importTurns(cf, history.turns, {
          onProgress: (d, t, phase) => {
            if (phase === 'writing') written = d;
            if (!g.json) bar.update(d, t, phase);
          },
        }).catch((e: unknown) => {
          throw afterPartialWrite(anotherConversation(e, file), history.turns, written);
        });
        forget();
        bar.done();
        const report: ImportReport = {
          file,
          format: history.format,
          format_detected: history.detected,
          dir: g.dir,
          session_id: cf.sessionId,
          turns: r.turns,
          folded: r.folded,
          already_folded: r.already_folded,
          first_step: r.first_step,
          last_step: r.last_step,
          open_steps: history.open,
          lone_surrogate_steps: r.lone_surrogate_steps,
          skipped_records: history.skipped,
        };
        emit(g, report, human);
      } finally {
        forget();
        await cf.close({ compact: true });
      }
    });
}
