import type { Command } from 'commander';
import type { ScanResult } from '../../engine/types.js';
import { emit, globals } from '../context.js';
import { withEngine } from '../engine-options.js';
import { helpText } from '../help-text.js';
import { textArg } from '../input.js';

const REASONS: Record<string, string> = {
  stopword: 'stopwords',
  'time-cue': 'time cues (they order the results)',
  'not-in-store': 'in no folded turn',
  'too-long': 'too long to be a key',
  'key-limit': 'more common than the rarest keys a long prompt is searched by',
};

/**
 * Dropped words a reason's line names at most: a pasted log of 1.5 MB drops some 24,000, and a
 * terminal shows a count instead of them (`--json` lists the first 100 of all reasons).
 */
export const SHOWN_DROPPED = 20;

const droppedLine = (label: string, terms: readonly string[]): string => {
  const more = terms.length - SHOWN_DROPPED;
  const shown = more > 0 ? terms.slice(0, SHOWN_DROPPED) : terms;
  const rest = more > 0 ? ` … and ${more} more (--json lists them)` : '';
  return `not searched, ${label}: ${shown.join(', ')}${rest}`;
};

const human = (r: ScanResult): string => {
  const lines = [`query terms: ${r.query_terms.join(', ') || '(none)'}`];
  for (const [reason, label] of Object.entries(REASONS)) {
    const terms = (r.dropped_terms ?? []).filter((d) => d.reason === reason).map((d) => d.term);
    if (terms.length > 0) lines.push(droppedLine(label, terms));
  }
  if (r.dropped_terms_omitted) {
    lines.push(`not searched, not listed: ${r.dropped_terms_omitted} more words`);
  }
  if (r.selected.length === 0) lines.push('nothing to page in');
  for (const p of r.selected) {
    // Ranked picks carry a chronological label; an alternative or companion owns no terms.
    const status = (p as { status?: string }).status;
    const terms = p.matched_terms.length > 0 ? `  ← ${p.matched_terms.join(', ')}` : '';
    lines.push(
      `  page in step ${p.step_id}${status ? ` ${status}` : ''}  (${p.cost} tokens)${terms}`,
    );
  }
  for (const p of r.budget_dropped) {
    lines.push(
      `  over budget: step ${p.step_id} (${p.cost} tokens) — intent dropped this turn: ${p.matched_terms.join(', ')}`,
    );
  }
  return lines.join('\n');
};

const HELP = helpText({
  notes: [
    'Read-only: the store must exist. Prints the steps the prompt would page in and those',
    'dropped by the per-turn budget (with their intent).',
    '',
  ],
  examples: [
    'contextfold scan "What port did we set for PostgreSQL?" --json',
    'echo "postgres port?" | contextfold scan - --json',
    'contextfold scan --prompt-file prompt.txt',
  ],
});

/** `contextfold scan`. */
export function register(program: Command): void {
  program
    .command('scan')
    .argument('[PROMPT]', "the incoming user prompt, or '-' to read it from standard input")
    .option('--prompt-file <FILE>', 'read PROMPT from a file (for prompts over 128 KB)')
    .addHelpText('after', HELP)
    .action(async (value: string | undefined, opts: { promptFile?: string }, cmd: Command) => {
      const prompt = textArg({
        value,
        file: opts.promptFile,
        name: 'PROMPT',
        fileOption: '--prompt-file',
      });
      const r = await withEngine(cmd, (cf) => cf.scan(prompt));
      emit(globals(cmd), r, human);
    });
}
