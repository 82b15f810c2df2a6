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

/** `contextfold hook`. */
export function register(program: Command): void {
  program
    .command('hook')
    .argument('<EVENT>', HOOK_EVENTS.join(' | '))
    .option(NO_REDACT_FLAG, NO_REDACT_HELP)
    .addHelpText(
      'after',
      [
        '',
        'Reads the hook input JSON on stdin and prints hookSpecificOutput JSON on stdout (or nothing);',
        'a warning (a refused record, a store warning, a prompt over 2 Mi characters scanned on its',
        'first and last lines only) is its systemMessage, shown to the user.',
        '  user-prompt-submit  ingest new turns, scan the prompt, add verified archived pages (≤ 8 KB)',
        '  pre-compact         fold every complete turn before Claude Code compacts',
        '  session-start       ingest; after a compaction, tell the model what is archived',
        'Each session has its own store: <dir>/claude-code/<session_id>/ (a relative --dir is taken',
        'relative to $CLAUDE_PROJECT_DIR, which Claude Code sets to the directory it started in, else',
        'to the hook input cwd). Errors exit 1, which Claude Code treats as non-blocking.',
        'A transcript_path with no file is one line on stderr: exit 0 for a new session (Claude Code',
        'creates the file after the first prompt), exit 1 when it was read before or on pre-compact.',
        '',
        'Install with: contextfold install claude-code --project',
        '',
        'Example (what Claude Code runs, with the hook input on stdin):',
        `  echo '{"session_id":"s1","transcript_path":"t.jsonl","cwd":".","prompt":"port?"}' | contextfold hook user-prompt-submit`,
      ].join('\n'),
    )
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
