import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { resolveHookCommand } from '../../adapters/claude-code/hook-runtime.js';
import {
  type InstallResult,
  type InstallScope,
  installClaudeCode,
} from '../../adapters/claude-code/install.js';
import { packageJson, packagePath } from '../../fs/package-root.js';
import { UsageError } from '../../protocol/errors.js';
import { emit, globals } from '../context.js';
import { helpText } from '../help-text.js';

const human = (r: InstallResult & { command: string }): string => {
  const lines = [`${r.changed ? 'updated' : 'already up to date:'} ${r.settings}`];
  lines.push(`  hooks run: ${r.command} hook <event>`);
  for (const [event, change] of Object.entries(r.hooks))
    lines.push(`  ${event.padEnd(17)} ${change}`);
  if (r.backup) lines.push(`previous file kept as ${r.backup}`);
  if (r.changed) lines.push('Restart Claude Code (or run /hooks) for the hooks to take effect.');
  return lines.join('\n');
};

const HELP = helpText({
  notes: [
    'Adds UserPromptSubmit, PreCompact and SessionStart hooks that run `contextfold hook <event>`.',
    'Idempotent: existing contextfold hooks are updated in place, other settings are kept, and the',
    'previous file is saved as settings.json.bak when anything changes. --dir, if given, is passed on',
    'to the hooks (a relative store directory is taken relative to the project directory).',
    '',
    'The hooks must run a copy that stays: this installation when it is an installed package',
    '(a project dependency, or a global install from a tarball or git URL), or, when this CLI',
    'runs from a source checkout (whose dist/ `npm test` rebuilds), the installed contextfold',
    "on PATH. npx's cache (~/.npm/_npx/…) is refused: npm clears it. Otherwise install a copy",
    'first: npm pack && npm install -g ./contextfold-<version>.tgz',
    '',
  ],
  examples: [
    'contextfold install claude-code --project',
    'contextfold install claude-code --user --command contextfold --json',
  ],
});

/** `contextfold install`. */
export function register(program: Command): void {
  program
    .command('install')
    .argument('<TARGET>', 'claude-code')
    .option('--project', "the project's .claude/settings.json (default)")
    .option('--user', "the user's ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR)")
    .option(
      '--command <CMD>',
      'command that starts contextfold in the hooks (default: an installed copy, see below)',
    )
    .addHelpText('after', HELP)
    .action(
      async (
        target: string,
        opts: { project?: boolean; user?: boolean; command?: string },
        cmd: Command,
      ) => {
        const g = globals(cmd);
        if (target !== 'claude-code')
          throw new UsageError(`unknown install target '${target}': use claude-code`);
        if (opts.project && opts.user) throw new UsageError('give --project or --user, not both');
        const scope: InstallScope = opts.user ? 'user' : 'project';
        const projectDir = process.cwd();
        const { command } = resolveHookCommand({
          binPath: packagePath('dist', 'cli', 'bin.js'),
          projectDir,
          scope,
          pathEnv: process.env.PATH,
          version: packageJson().version,
          ...(opts.command !== undefined ? { command: opts.command } : {}),
        });
        const dirGiven = cmd.getOptionValueSourceWithGlobals('dir') === 'cli';
        const rawDir = (cmd.optsWithGlobals() as { dir?: string }).dir;
        const r = installClaudeCode({
          scope,
          projectDir,
          userDir: process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), '.claude'),
          command,
          ...(dirGiven && rawDir !== undefined ? { dir: rawDir } : {}),
        });
        emit(g, { ...r, command }, human);
      },
    );
}
