import type { Command } from 'commander';
import { emit, globals } from '../context.js';
import { withEngine } from '../engine-options.js';
import { progressBar } from '../progress.js';

/** `contextfold reindex`. */
export function register(program: Command): void {
  program
    .command('reindex')
    .addHelpText(
      'after',
      [
        '',
        'The derived index is rebuilt automatically when it is missing, corrupt or foreign; run',
        "this when 'contextfold validate' reports it stale. Cold nodes and recall_index.json are",
        'read, never written.',
        '',
        'Example:',
        '  contextfold --dir path/to/.contextfold reindex --json',
      ].join('\n'),
    )
    .action(async (_opts, cmd: Command) => {
      const bar = progressBar('analysing nodes');
      const r = await withEngine(cmd, (cf) =>
        cf.reindex({ onProgress: (done, total) => bar.update(done, total) }),
      );
      bar.done();
      emit(
        globals(cmd),
        r,
        (x: { nodes: number; analysed: number; index: string | null }) =>
          `reindexed ${x.nodes} node(s) into ${x.index ?? '(no index: empty store)'}; ${x.analysed} analysed`,
      );
    });
}
