import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import {
  HOOK_EVENTS,
  type HookEvent,
  parseHookInput,
} from '../../adapters/claude-code/hook-input.js';
import { runHook } from '../../adapters/claude-code/run-hook.js';
import type { OpenOptions } from '../../engine/types.js';
import { UsageError } from '../../protocol/errors.js';
import { reportError } from '../context.js';
import { engineOptions, NO_REDACT_FLAG, NO_REDACT_HELP } from '../engine-options.js';

function readStdin(event: string): string {
  if (process.stdin.isTTY) {
    throw new UsageError(
      `contextfold hook ${event} reads Claude Code's hook JSON from stdin; it is run by Claude Code (see contextfold install claude-code)`,
    );
  }
  return readFileSync(0, 'utf8');
}

/** `contextfold hook`. */
export function register(program: Command): void {
  program
    .command('hook')
    .description(
      'Claude Code hook: ingest the transcript and page archived turns back in (run by Claude Code)',
    )
    .argument('<EVENT>', HOOK_EVENTS.join(' | '))
    .option(NO_REDACT_FLAG, NO_REDACT_HELP)
    .addHelpText(
      'after',
      [
        '',
        'Reads the hook input JSON on stdin and prints hookSpecificOutput JSON on stdout (or nothing).',
        '  user-prompt-submit  ingest new turns, scan the prompt, add verified archived pages (≤ 8 KB)',
        '  pre-compact         fold every complete turn before Claude Code compacts',
        '  session-start       ingest; after a compaction, tell the model what is archived',
        'Each session has its own store: <dir>/claude-code/<session_id>/ (a relative --dir is taken',
        'relative to the hook input cwd). Errors exit 1, which Claude Code treats as non-blocking.',
        'A transcript_path with no file is one line on stderr: exit 0 for a new session (Claude Code',
        'creates the file after the first prompt), exit 1 when it was read before or on pre-compact.',
        '',
        'Install with: contextfold install claude-code --project',
      ].join('\n'),
    )
    .action(async (event: string, _opts, cmd: Command) => {
      try {
        if (!HOOK_EVENTS.includes(event as HookEvent)) {
          throw new UsageError(`unknown hook event '${event}': use ${HOOK_EVENTS.join(', ')}`);
        }
        const input = parseHookInput(readStdin(event), event as HookEvent);
        const raw = (cmd.optsWithGlobals() as { dir?: string }).dir ?? '.contextfold';
        const baseDir = isAbsolute(raw) ? raw : resolve(input.cwd ?? process.cwd(), raw);
        const o = engineOptions(cmd);
        const engine: Omit<OpenOptions, 'dir'> = {};
        if (o.tokenizer !== undefined) engine.tokenizer = o.tokenizer;
        if (o.retrieval !== undefined) engine.retrieval = o.retrieval;
        if (o.redact === false) engine.redact = false;
        const outcome = await runHook({ event: event as HookEvent, input, baseDir, engine });
        if (outcome.notice) process.stderr.write(`contextfold: ${outcome.notice}\n`);
        if (outcome.output) process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
      } catch (e) {
        // Never exit 2 (Claude Code would block the prompt) and never print errors on stdout
        // (Claude Code would read them as hook output): one line on stderr, exit 1.
        reportError(e, false);
        process.exitCode = 1;
      }
    });
}
