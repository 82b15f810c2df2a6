import type { Command } from 'commander';
import type { EvictResult } from '../../engine/types.js';
import { emit, globals, parseIntArg } from '../context.js';
import { withEngine } from '../engine-options.js';
import { helpText } from '../help-text.js';

const HELP = helpText({
  notes: [
    'Marks the step evicted in the eviction log (it stays archived): a later prompt may page it',
    'in again. An unknown step exits 2.',
    '',
  ],
  examples: ['contextfold evict 37', 'contextfold evict 37 --json'],
});

/** `contextfold evict`. */
export function register(program: Command): void {
  program
    .command('evict')
    .argument('<STEP>', 'step id')
    .addHelpText('after', HELP)
    .action(async (step: string, _opts, cmd: Command) => {
      const r = await withEngine(cmd, (cf) => cf.evict(parseIntArg(step, 'STEP')), { write: true });
      emit(globals(cmd), r, (x: EvictResult) => `evicted step ${x.step_id} at ${x.evicted_at}`);
    });
}
