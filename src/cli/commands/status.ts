import type { Command } from 'commander';
import type { StatusResult } from '../../engine/types.js';
import { emit, globals } from '../context.js';
import { withEngine } from '../engine-options.js';
import { helpText } from '../help-text.js';

const human = (s: StatusResult): string =>
  [
    `store          ${s.dir}`,
    `nodes          ${s.nodes} (${s.evicted} evicted at least once)`,
    `payload tokens ~${s.total_token_estimate} (reference estimate)`,
    `journal        ${s.journal_entries} uncompacted entr${s.journal_entries === 1 ? 'y' : 'ies'}`,
    `projection     ${s.projection_version}`,
    `policy         per call ${s.policy.max_rehydration_tokens_per_call}, per turn ${s.policy.max_rehydration_tokens_per_turn ?? 3500} (hash ${s.folding_policy_hash.slice(0, 12)}…)`,
    `tokenizer      ${s.tokenizer}; retrieval ${s.retrieval}`,
    `index          ${s.index?.path ?? (s.nodes > 0 ? '(in memory)' : '(none yet)')}${s.index?.pending_analysis ? ` (${s.index.pending_analysis} node(s) to analyse on the next ranked scan)` : ''}`,
    `sanitized      ${s.sanitized_nodes} node(s) redacted before write, ${s.unsanitized_nodes} not${s.unreadable_nodes ? `, ${s.unreadable_nodes} unreadable` : ''}; new folds ${s.redact ? 'are redacted' : 'are not redacted'}`,
  ].join('\n');

const HELP = helpText({
  notes: ['Nodes, evictions, journal, policy, tokenizer, derived index and redaction counts.', ''],
  examples: [
    'contextfold status',
    'contextfold --dir path/to/.contextfold status --json | jq .nodes',
  ],
});

/** `contextfold status`. */
export function register(program: Command): void {
  program
    .command('status')
    .addHelpText('after', HELP)
    .action(async (_opts, cmd: Command) => {
      const r = await withEngine(cmd, (cf) => cf.status());
      emit(globals(cmd), r, human);
    });
}
