import type { Command } from 'commander';
import type { RecallResult } from '../../engine/types.js';
import { emit, globals, parseIntArg } from '../context.js';
import { withEngine } from '../engine-options.js';

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

/** `contextfold recall`. */
export function register(program: Command): void {
  program
    .command('recall')
    .description('explicit recall: chronological candidates with coverage tiers (CONF-04)')
    .argument('<QUERY>', 'what to look for')
    .option('--limit <N>', 'at most N candidates (default: all)')
    .addHelpText('after', '\nExample:\n  contextfold recall "PostgreSQL port"')
    .action(async (query: string, opts: { limit?: string }, cmd: Command) => {
      const limit = opts.limit !== undefined ? parseIntArg(opts.limit, '--limit') : undefined;
      const r = await withEngine(cmd, async (cf) => {
        const all = await cf.recall(query);
        return limit === undefined
          ? all
          : { ...all, candidates: all.candidates.slice(0, limit), total: all.candidates.length };
      });
      emit(globals(cmd), r, human);
    });
}
