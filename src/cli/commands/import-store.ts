import type { Command } from 'commander';
import { transferStore } from '../../engine/store-transfer.js';
import { directoryArg, emit, globals, requireStore } from '../context.js';
import { helpText } from '../help-text.js';
import { phasedProgress } from '../progress.js';

/** The copy's two passes, as its progress bars name them. */
const PHASES = { verifying: 'verifying nodes', writing: 'importing nodes' };

const HELP = helpText({
  notes: [
    'Every node is verified (all three hashes) before anything is written; into a database the',
    'load is one transaction. The target store must hold no node yet.',
    '',
  ],
  examples: [
    "contextfold --store 'postgres://cf@db:5432/contextfold?store_id=web' import-store ./.contextfold",
  ],
});

/** `contextfold import-store DIR`: a reference-layout store loaded into `--store`, verified. */
export function register(program: Command): void {
  program
    .command('import-store')
    .argument('<DIR>', 'the store directory to load (e.g. ./.contextfold)')
    .addHelpText('after', HELP)
    .action(async (dir: string, _opts: unknown, cmd: Command) => {
      const g = globals(cmd);
      const from = directoryArg(
        dir,
        'import-store',
        'to copy a store out of PostgreSQL, run contextfold --store URL export --to DIR',
      );
      requireStore(from);
      const progress = phasedProgress(PHASES);
      const r = await transferStore({
        from,
        to: g.dir,
        ...(g.json ? {} : { onProgress: progress.update }),
      }).finally(progress.done);
      emit(
        g,
        r,
        (x: typeof r) =>
          `imported ${x.nodes} node(s), ${x.evictions} eviction(s), ${x.events} event line(s) → ${x.to}`,
      );
    });
}
