import type { Command } from 'commander';
import { packageJson } from '../../fs/package-root.js';
import { UsageError } from '../../protocol/errors.js';
import { requireDirectory, requireStore } from '../context.js';
import { engineOptions, NO_REDACT_FLAG, NO_REDACT_HELP } from '../engine-options.js';

/** The MCP adapter, or a usage error naming the optional peer to install. */
async function loadMcpServer(): Promise<typeof import('../../adapters/mcp/server.js')> {
  try {
    return await import('../../adapters/mcp/server.js');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String(e).includes('@modelcontextprotocol/sdk')) {
      throw new UsageError(
        'contextfold mcp needs the MCP SDK, an optional peer dependency: npm install @modelcontextprotocol/sdk',
      );
    }
    throw e;
  }
}

/** `contextfold mcp`. */
export function register(program: Command): void {
  program
    .command('mcp')
    .option(NO_REDACT_FLAG, NO_REDACT_HELP)
    .addHelpText(
      'after',
      [
        '',
        'Tools: recall_archived_nodes, hydrate_archived_node, scan_prompt, fold_turn, fold_status, validate_store.',
        'stdout carries only MCP protocol messages; diagnostics go to stderr. The server runs until stdin closes.',
        'The store must exist (a wrong --dir is an error, not an empty store); --create serves a new one',
        'that the client fills through fold_turn.',
        '',
        'Example (Claude Code):',
        '  claude mcp add contextfold -- contextfold mcp --dir /abs/path/.contextfold',
      ].join('\n'),
    )
    .option('--create', 'serve a store that does not exist yet (created by the first fold_turn)')
    .action(async (opts: { create?: boolean }, cmd: Command) => {
      const options = engineOptions(cmd);
      if (opts.create) requireDirectory(options.dir!);
      else requireStore(options.dir!);
      // Loaded here so the MCP SDK costs nothing to every other command; it is an optional peer.
      const { runStdioServer } = await loadMcpServer();
      await runStdioServer({
        ...options,
        mustExist: !opts.create,
        name: 'contextfold',
        version: packageJson().version,
      });
    });
}
