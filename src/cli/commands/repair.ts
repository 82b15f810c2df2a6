import type { Command } from 'commander';
import { type RepairResult, repairStore } from '../../engine/repair.js';
import { emit, globals, setExitCode } from '../context.js';
import { withEngine } from '../engine-options.js';
import { helpText } from '../help-text.js';

const human = (r: RepairResult): string => {
  if (r.items.length === 0) return 'ok: validate found no problems, nothing to repair';
  const lines = r.items.map((i) => {
    const what = i.actions
      .map((a) => (a.action === 'quarantine' && a.to ? `quarantine → ${a.to}` : a.action))
      .join(', ');
    return `  ${i.problem.kind.padEnd(17)} ${i.problem.step_id === null ? '-' : `step ${i.problem.step_id}`}  ${i.problem.path}\n    ${r.applied ? 'did' : 'would'}: ${what || 'nothing'}`;
  });
  const tail = r.applied
    ? r.remaining.length === 0
      ? `validate is clean; actions logged to ${r.log}`
      : `${r.remaining.length} problem(s) remain (run contextfold validate)`
    : 'dry run: nothing changed; run with --apply to do it';
  return [`${r.items.length} problem(s):`, ...lines, tail].join('\n');
};

const HELP = helpText({
  notes: ['Never deletes bytes: a tampered or foreign file moves to .contextfold/quarantine/.', ''],
  examples: ['contextfold repair', 'contextfold repair --apply --json'],
});

/** `contextfold repair`. */
export function register(program: Command): void {
  program
    .command('repair')
    .option('--apply', 'do it (appends every action to .contextfold/repair_log.jsonl)')
    .addHelpText('after', HELP)
    .action(async (opts: { apply?: boolean }, cmd: Command) => {
      const r = await withEngine(cmd, (cf) => repairStore(cf, { apply: opts.apply === true }), {
        write: opts.apply === true,
      });
      emit(globals(cmd), r, human);
      if (r.remaining.length > 0 && opts.apply) setExitCode(1);
    });
}
