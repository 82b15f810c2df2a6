import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import {
  type InstallScope,
  type UninstallResult,
  uninstallClaudeCode,
} from '../../adapters/claude-code/install.js';
import { UsageError } from '../../protocol/errors.js';
import { emit, globals } from '../context.js';
import { helpText } from '../help-text.js';

const human = (r: UninstallResult): string => {
  if (!r.changed) return `no contextfold hooks in ${r.settings}: nothing changed`;
  const lines = [`updated ${r.settings}`];
  for (const [event, n] of Object.entries(r.removed)) {
    lines.push(`  ${event.padEnd(17)} ${n === 0 ? 'none' : `${n} removed`}`);
  }
  if (r.backup) lines.push(`previous file kept as ${r.backup}`);
  lines.push('Restart Claude Code (or run /hooks) for the change to take effect.');
  return lines.join('\n');
};

const HELP = helpText({
  notes: [
    'Removes the hooks `contextfold install claude-code` added (any command line running',
    '`contextfold hook <event>` or `…/cli/bin.js hook <event>`), with the groups and event lists',
    'they leave empty. Other hooks and settings are kept; the previous file is saved as',
    'settings.json.bak when anything changes. The stores under .contextfold are left as they are.',
    '',
  ],
  examples: [
    'contextfold uninstall claude-code',
    'contextfold uninstall claude-code --user --json',
  ],
});

/** `contextfold uninstall`. */
export function register(program: Command): void {
  program
    .command('uninstall')
    .argument('<TARGET>', 'claude-code')
    .option('--project', "the project's .claude/settings.json (default)")
    .option('--user', "the user's ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR)")
    .addHelpText('after', HELP)
    .action(async (target: string, opts: { project?: boolean; user?: boolean }, cmd: Command) => {
      const g = globals(cmd);
      if (target !== 'claude-code')
        throw new UsageError(`unknown uninstall target '${target}': use claude-code`);
      if (opts.project && opts.user) throw new UsageError('give --project or --user, not both');
      const scope: InstallScope = opts.user ? 'user' : 'project';
      const r = uninstallClaudeCode({
        scope,
        projectDir: process.cwd(),
        userDir: process.env.CLAUDE_CONFIG_DIR ?? join(homedir(), '.claude'),
      });
      emit(g, r, human);
    });
}
