import type { Command } from 'commander';
import type { ValidateResult } from '../../engine/types.js';
import { emit, globals, setExitCode } from '../context.js';
import { withEngine } from '../engine-options.js';
import { helpText } from '../help-text.js';

const human = (r: ValidateResult): string => {
  if (r.ok) return `ok: ${r.checked} node(s) verified, no problems`;
  return [
    `${r.problems.length} problem(s) in ${r.checked} indexed node(s):`,
    ...r.problems.map(
      (p) =>
        `  ${p.kind.padEnd(17)} ${p.step_id === null ? '-' : `step ${p.step_id}`}  ${p.message}`,
    ),
    "next: 'contextfold repair' shows the action for each problem, 'contextfold repair --apply' does them",
  ].join('\n');
};

const HELP = helpText({
  notes: [
    "Exit 0 when clean, 1 on problems; 'contextfold repair' plans (--apply does) their repair.",
    '',
  ],
  examples: ['contextfold validate', 'contextfold validate --json | jq .problems'],
});

/** `contextfold validate`. */
export function register(program: Command): void {
  program
    .command('validate')
    .addHelpText('after', HELP)
    .action(async (_opts, cmd: Command) => {
      const r = await withEngine(cmd, (cf) => cf.validate());
      emit(globals(cmd), r, human);
      if (!r.ok) setExitCode(1);
    });
}
