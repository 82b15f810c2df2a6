import type { Command } from 'commander';
import { emit, globals } from '../context.js';
import { withEngine } from '../engine-options.js';
import { helpText } from '../help-text.js';

const HELP = helpText({
  notes: [
    'Folds happen without it (the journal is compacted on its own past a threshold); run it before',
    'handing the directory to a tool that reads only recall_index.json.',
    '',
  ],
  examples: ['contextfold compact', 'contextfold --dir path/to/.contextfold compact --json'],
});

/** `contextfold compact`. */
export function register(program: Command): void {
  program
    .command('compact')
    .addHelpText('after', HELP)
    .action(async (_opts, cmd: Command) => {
      const r = await withEngine(cmd, (cf) => cf.compact(), { write: true });
      emit(
        globals(cmd),
        r,
        (x: { nodes: number; journal_entries_compacted: number }) =>
          `compacted ${x.journal_entries_compacted} journal entr${x.journal_entries_compacted === 1 ? 'y' : 'ies'}; ${x.nodes} node(s) indexed`,
      );
    });
}
