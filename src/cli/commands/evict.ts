import type { Command } from 'commander';
import type { EvictResult } from '../../engine/types.js';
import { emit, globals, parseIntArg } from '../context.js';
import { withEngine } from '../engine-options.js';

/** `contextfold evict`. */
export function register(program: Command): void {
  program
    .command('evict')
    .argument('<STEP>', 'step id')
    .action(async (step: string, _opts, cmd: Command) => {
      const r = await withEngine(cmd, (cf) => cf.evict(parseIntArg(step, 'STEP')), { write: true });
      emit(globals(cmd), r, (x: EvictResult) => `evicted step ${x.step_id} at ${x.evicted_at}`);
    });
}
