import type { Command } from 'commander';
import type { Inspector } from '../../inspect/server.js';
import { emit, globals, parseIntArg } from '../context.js';
import { engineOptions } from '../engine-options.js';
import { helpText } from '../help-text.js';

interface InspectOpts {
  host: string;
  port: string;
  open: boolean;
  allowRemote?: boolean;
}

const human = (r: { url: string; stores: string[] }): string =>
  [
    `contextfold inspect: ${r.stores.length} store(s) (${r.stores.join(', ')}), read-only`,
    r.url,
    'press Ctrl-C to stop',
  ].join('\n');

/** Resolves on SIGINT or SIGTERM. */
function untilStopped(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

const HELP = helpText({
  notes: [
    'Prints the URL (with --json, one JSON line) and serves until Ctrl-C. The URL carries a',
    'random token; requests without it get 403. Nothing it serves writes to the store.',
    '',
  ],
  examples: [
    'contextfold inspect --dir .contextfold',
    'contextfold inspect --no-open --port 8377 --json',
  ],
});

/** `contextfold inspect`. */
export function register(program: Command): void {
  program
    .command('inspect')
    .option('--host <HOST>', 'interface to bind (loopback unless --allow-remote)', '127.0.0.1')
    .option('--port <PORT>', 'port to listen on (0 picks a free one)', '0')
    .option('--no-open', 'do not try to open a browser')
    .option('--allow-remote', 'allow a non-loopback --host (exposes the archive to the network)')
    .addHelpText('after', HELP)
    .action(async (opts: InspectOpts, cmd: Command) => {
      const g = globals(cmd);
      const e = engineOptions(cmd);
      const port = parseIntArg(opts.port, '--port');
      // Loaded here so hono costs nothing to every other command.
      const { startInspector } = await import('../../inspect/server.js');
      const inspector: Inspector = await startInspector({
        dir: g.dir,
        host: opts.host,
        port,
        allowRemote: Boolean(opts.allowRemote),
        // As every other command: one line on stderr (stdout stays the URL, or its JSON).
        onWarning: (m, store) =>
          process.stderr.write(
            `contextfold: warning: ${store === '.' ? '' : `store ${store}: `}${m}\n`,
          ),
        ...(e.tokenizer === 'o200k' || e.tokenizer === 'reference'
          ? { tokenizer: e.tokenizer }
          : {}),
        ...(e.retrieval ? { retrieval: e.retrieval } : {}),
      });
      // Listening for Ctrl-C before the URL is printed: whoever reads it may stop us at once.
      const stopped = untilStopped();
      for (const w of inspector.warnings) process.stderr.write(`contextfold: warning: ${w}\n`);
      emit(
        g,
        {
          url: inspector.url,
          host: inspector.host,
          port: inspector.port,
          stores: inspector.stores.map((s) => s.id),
          warnings: inspector.warnings,
        },
        human,
      );
      let removeRedirect = (): void => {};
      if (opts.open) {
        // Not the URL itself: the token would be on the opener's command line, shown by `ps`.
        const { openBrowserPrivately } = await import('../../inspect/open-browser.js');
        removeRedirect = (await openBrowserPrivately(inspector.url)).remove;
      }
      await stopped;
      removeRedirect();
      await inspector.close();
    });
}
