import type { Command } from 'commander';
import { emit, globals } from '../context.js';
import { withEngine } from '../engine-options.js';

/** `contextfold compact`. */
export function register(program: Command): void {
  program.command('compact').action(async (_opts, cmd: Command) => {
    const r = await withEngine(cmd, (cf) => cf.compact(), { write: true });
    emit(
      globals(cmd),
      r,
      (x: { nodes: number; journal_entries_compacted: number }) =>
        `compacted ${x.journal_entries_compacted} journal entr${x.journal_entries_compacted === 1 ? 'y' : 'ies'}; ${x.nodes} node(s) indexed`,
    );
  });
}
