import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { engineOptions, NO_REDACT_FLAG, NO_REDACT_HELP } from '../engine-options.js';

function packageVersion(): string {
  const url = new URL('../../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
}

/** `contextfold mcp`. */
export function register(program: Command): void {
  program
    .command('mcp')
    .description(
      'serve the store to an MCP client over stdio (recall, hydrate, scan, fold, status, validate)',
    )
    .option(NO_REDACT_FLAG, NO_REDACT_HELP)
    .addHelpText(
      'after',
      [
        '',
        'Tools: recall_archived_nodes, hydrate_archived_node, scan_prompt, fold_turn, fold_status, validate_store.',
        'stdout carries only MCP protocol messages; diagnostics go to stderr. The server runs until stdin closes.',
        '',
        'Example (Claude Code):',
        '  claude mcp add contextfold -- npx contextfold mcp --dir /abs/path/.contextfold',
      ].join('\n'),
    )
    .action(async (_opts, cmd: Command) => {
      // Loaded here so the MCP SDK costs nothing to every other command.
      const { runStdioServer } = await import('../../adapters/mcp/server.js');
      await runStdioServer({
        ...engineOptions(cmd),
        name: 'contextfold',
        version: packageVersion(),
      });
    });
}
