import type { Command } from 'commander';
import type { ScanResult } from '../../engine/types.js';
import { emit, globals } from '../context.js';
import { withEngine } from '../engine-options.js';

const REASONS: Record<string, string> = {
  stopword: 'stopwords',
  'time-cue': 'time cues (they order the results)',
  'not-in-store': 'in no folded turn',
  'too-long': 'too long to be a key',
};

const human = (r: ScanResult): string => {
  const lines = [`query terms: ${r.query_terms.join(', ') || '(none)'}`];
  for (const [reason, label] of Object.entries(REASONS)) {
    const terms = (r.dropped_terms ?? []).filter((d) => d.reason === reason).map((d) => d.term);
    if (terms.length > 0) lines.push(`not searched, ${label}: ${terms.join(', ')}`);
  }
  if (r.selected.length === 0) lines.push('nothing to page in');
  for (const p of r.selected)
    lines.push(`  page in step ${p.step_id}  (${p.cost} tokens)  ← ${p.matched_terms.join(', ')}`);
  for (const p of r.budget_dropped) {
    lines.push(
      `  over budget: step ${p.step_id} (${p.cost} tokens) — intent dropped this turn: ${p.matched_terms.join(', ')}`,
    );
  }
  return lines.join('\n');
};

/** `contextfold scan`. */
export function register(program: Command): void {
  program
    .command('scan')
    .description('software MMU: which archived steps a prompt would page in (CONF-13)')
    .argument('<PROMPT>', 'the incoming user prompt')
    .addHelpText(
      'after',
      '\nExample:\n  contextfold scan "What port did we set for PostgreSQL?" --json',
    )
    .action(async (prompt: string, _opts, cmd: Command) => {
      const r = await withEngine(cmd, (cf) => cf.scan(prompt));
      emit(globals(cmd), r, human);
    });
}
