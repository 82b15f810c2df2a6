import type { Command } from 'commander';
import type { RecallResult } from '../../engine/types.js';
import { emit, globals, parsePositiveIntArg } from '../context.js';
import { withEngine } from '../engine-options.js';
import { helpText } from '../help-text.js';
import { textArg } from '../input.js';

const human = (r: RecallResult & { total?: number }): string => {
  if (r.candidates.length === 0) return `no archived step matches "${r.query}"`;
  const lines = r.candidates.map(
    (c) =>
      `  ${String(c.step_id).padStart(6)}  ${c.status.padEnd(20)} coverage ${c.coverage} score ${c.score}  ${c.summary}`,
  );
  if (r.total !== undefined && r.total > r.candidates.length) {
    lines.push(`  … ${r.total - r.candidates.length} more (use --limit)`);
  }
  return lines.join('\n');
};

const HELP = helpText({
  notes: [
    'Read-only: the store must exist. Candidates are chronological, newest first, labelled',
    'latest_chronological / superseded / historical / related.',
    '',
  ],
  examples: [
    'contextfold recall "PostgreSQL port"',
    'contextfold recall "PostgreSQL port" --limit 3 --json',
  ],
});

/** `contextfold recall`. */
export function register(program: Command): void {
  program
    .command('recall')
    .argument('[QUERY]', "what to look for, or '-' to read it from standard input")
    .option('--query-file <FILE>', 'read QUERY from a file')
    .option('--limit <N>', 'at most N candidates, N ≥ 1 (default: all)')
    .addHelpText('after', HELP)
    .action(
      async (
        value: string | undefined,
        opts: { limit?: string; queryFile?: string },
        cmd: Command,
      ) => {
        const limit =
          opts.limit !== undefined ? parsePositiveIntArg(opts.limit, '--limit') : undefined;
        const query = textArg({
          value,
          file: opts.queryFile,
          name: 'QUERY',
          fileOption: '--query-file',
        });
        const r = await withEngine(cmd, async (cf) => {
          const all = await cf.recall(query);
          return limit === undefined
            ? all
            : { ...all, candidates: all.candidates.slice(0, limit), total: all.candidates.length };
        });
        emit(globals(cmd), r, human);
      },
    );
}
