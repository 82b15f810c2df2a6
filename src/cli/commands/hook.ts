import type { Command } from 'commander';
import { HOOK_EVENTS, type HookEvent } from '../../adapters/claude-code/hook-input.js';
import { UsageError } from '../../protocol/errors.js';
import { reportError } from '../context.js';
import { NO_REDACT_FLAG, NO_REDACT_HELP } from '../engine-options.js';
import { processIo, projectDirOf, runHookRequest } from '../hook-request.js';
import { readStdinText } from '../read-stdin.js';

async function readStdin(event: string): Promise<string> {
  if (process.stdin.isTTY) {
    throw new UsageError(
      `contextfold hook ${event} reads Claude Code's hook JSON from stdin; it is run by Claude Code (see contextfold install claude-code)`,
    );
  }
  return readStdinText();
}

/** What `contextfold hook --help` says after the usage. */
const HELP_AFTER = [
  '',
  'Reads the hook input JSON on stdin and prints hookSpecificOutput JSON on stdout (or nothing);',
  'a warning (a refused record, a store warning, a prompt over 2 Mi characters scanned on its',
  'first and last lines only) is its systemMessage, shown to the user.',
  '  user-prompt-submit  ingest new turns, scan the prompt, add verified archived pages (≤ 8 KB)',
  '  pre-compact         fold every complete turn before Claude Code compacts',
  '  session-start       ingest; after a compaction, tell the model what is archived',
  'Each session has its own store: <dir>/claude-code/<session_id>/ (a relative --dir is taken',
  'relative to $CLAUDE_PROJECT_DIR, which Claude Code sets to the directory it started in, else',
  'to the hook input cwd).',
  'Exit codes (never 2, which would block the prompt):',
  '  1  the command line or the hook input is wrong (unknown event or option, --store, a bad',
  '     option value, stdin that is not the hook JSON): one line on stderr, nothing on stdout',
  '  0  otherwise, also when the run fails once its input is valid (store or record refused,',
  '     a lock that stays taken, transcript unreadable or gone, an unexpected error): Claude',
  '     Code reads the JSON only on exit 0, so the error is a systemMessage line (its code and',
  '     path, also on stderr), and nothing is paged in from a refused store',
  'A transcript_path with no file in a new session (Claude Code creates it after the first',
  'prompt) is one line on stderr only.',
  '',
  'Install with: contextfold install claude-code --project',
  '',
  'Example (what Claude Code runs, with the hook input on stdin):',
  `  echo '{"session_id":"s1","transcript_path":"t.jsonl","cwd":".","prompt":"port?"}' | contextfold hook user-prompt-submit`,
].join('\n');

/** `contextfold hook`. */
export function register(program: Command): void {
  program
    .command('hook')
    .argument('<EVENT>', HOOK_EVENTS.join(' | '))
    .option(NO_REDACT_FLAG, NO_REDACT_HELP)
    .addHelpText('after', HELP_AFTER)
    .action(async (event: string, _opts, cmd: Command) => {
      const o = cmd.optsWithGlobals() as {
        dir?: string;
        tokenizer?: string;
        retrieval?: string;
        redact?: boolean;
      };
      let stdin: string;
      try {
        // Each session has its own store under --dir: a --store would be ignored, so say so.
        if (cmd.getOptionValueSourceWithGlobals('store') === 'cli') {
          throw new UsageError(
            "contextfold hook keeps each session's store in a directory, <dir>/claude-code/<session_id>/: give --dir DIR, not --store",
          );
        }
        // An unknown event is reported by the run, before anything is read.
        stdin = HOOK_EVENTS.includes(event as HookEvent) ? await readStdin(event) : '';
      } catch (e) {
        reportError(e, false);
        process.exitCode = 1;
        return;
      }
      process.exitCode = await runHookRequest(
        {
          v: 1,
          event,
          stdin,
          ...(o.dir !== undefined ? { dir: o.dir } : {}),
          ...(o.tokenizer !== undefined ? { tokenizer: o.tokenizer } : {}),
          ...(o.retrieval !== undefined ? { retrieval: o.retrieval } : {}),
          redact: o.redact !== false,
          cwd: process.cwd(),
          ...projectDirOf(process.env),
        },
        processIo,
      );
    });
}
