import type { Command } from 'commander';
import { transferStore } from '../../engine/store-transfer.js';
import { UsageError } from '../../protocol/errors.js';
import { storeExists } from '../../store/layout.js';
import { directoryArg, emit, globals, requireStore } from '../context.js';
import { helpText } from '../help-text.js';
import { phasedProgress } from '../progress.js';

/** The copy's two passes, as its progress bars name them. */
const PHASES = { verifying: 'verifying nodes', writing: 'exporting nodes' };

const HELP = helpText({
  examples: [
    "contextfold --store 'postgres://cf@db:5432/contextfold?store_id=web' export --to ./web/.contextfold",
  ],
});

/** `contextfold export --to DIR`: the store (any backend) as a reference-layout directory. */
export function register(program: Command): void {
  program
    .command('export')
    .requiredOption('--to <DIR>', 'the new store directory (must not hold a store yet)')
    .addHelpText('after', HELP)
    .action(async (opts: { to: string }, cmd: Command) => {
      const g = globals(cmd);
      requireStore(g.dir);
      const to = directoryArg(
        opts.to,
        '--to',
        'to copy a store into PostgreSQL, run contextfold --store URL import-store DIR',
      );
      if (storeExists(to)) {
        throw new UsageError(`--to ${to} already holds a store: choose a new directory`, {
          path: to,
        });
      }
      const progress = phasedProgress(PHASES);
      const r = await transferStore({
        from: g.dir,
        to,
        ...(g.json ? {} : { onProgress: progress.update }),
      }).finally(progress.done);
      emit(
        g,
        r,
        (x: typeof r) =>
          `exported ${x.nodes} node(s), ${x.evictions} eviction(s), ${x.events} event line(s) → ${x.to}`,
      );
    });
}
