import type { Command } from 'commander';
import type { RetrievalMode } from '../../engine/types.js';
import { loadQuestions } from '../../eval/load.js';
import { runEval } from '../../eval/run-eval.js';
import type { EvalResult, EvalSummary } from '../../eval/types.js';
import { UsageError } from '../../protocol/errors.js';
import { emit, globals } from '../context.js';
import { progressBar } from '../progress.js';

/** The mode `eval` measures when `--retrieval` is not given: the better page-in. */
export const DEFAULT_EVAL_MODE: RetrievalMode = 'ranked';

const pct = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);

function summaryLines(mode: string, s: EvalSummary): string[] {
  const lines = [
    `retrieval ${mode}: ${s.questions} questions`,
    `  hit_rate                  ${pct(s.hit_rate)}`,
    `  latest_hit_rate_evolving  ${pct(s.latest_hit_rate_evolving)}`,
    `  token_precision           ${pct(s.token_precision)}`,
    `  mean_pages                ${s.mean_pages.toFixed(2)}`,
    `  mean_tokens               ${s.mean_tokens.toFixed(0)}`,
    `  no_page_rate              ${pct(s.no_page_rate)}`,
    `  scan latency              p50 ${s.scan_latency_ms.p50} ms, p99 ${s.scan_latency_ms.p99} ms`,
    '  by kind (hit rate):',
  ];
  for (const [kind, rate] of Object.entries(s.by_kind)) {
    lines.push(`    ${kind.padEnd(18)} ${pct(rate)}`);
  }
  return lines;
}

const human = (r: EvalResult | { results: EvalResult[] }): string => {
  const results = 'results' in r ? r.results : [r];
  return results.map((x) => summaryLines(x.mode, x.summary).join('\n')).join('\n\n');
};

function modeOf(cmd: Command): RetrievalMode {
  const o = cmd.optsWithGlobals() as { retrieval?: string };
  if (o.retrieval === undefined) return DEFAULT_EVAL_MODE;
  if (o.retrieval !== 'reference' && o.retrieval !== 'ranked') {
    throw new UsageError(`--retrieval must be 'reference' or 'ranked', got '${o.retrieval}'`);
  }
  return o.retrieval;
}

/** `contextfold eval`. */
export function register(program: Command): void {
  program
    .command('eval')
    .description(
      'retrieval eval (eval/README.md): fold real sessions, ask the questions, score what is paged in',
    )
    .requiredOption('--questions <FILE>', 'questions JSON ({ questions: [...] } or an array)')
    .requiredOption('--trajectories <DIR>', 'directory of <trajectory>.jsonl turn files')
    .option('--compare', "measure both 'reference' and 'ranked' (ignores --retrieval)")
    .addHelpText(
      'after',
      [
        '',
        'Measures the mode given by --retrieval (default: ranked). Temporary stores are removed.',
        '--json prints { mode, summary, rows } (with --compare: { results: [...] }).',
        '',
        'Example:',
        '  contextfold eval --questions ../shared/eval/questions.public.json \\',
        '    --trajectories ../shared/data/trajectories --compare',
      ].join('\n'),
    )
    .action(
      async (
        opts: { questions: string; trajectories: string; compare?: boolean },
        cmd: Command,
      ) => {
        const g = globals(cmd);
        const questions = loadQuestions(opts.questions);
        const modes: RetrievalMode[] = opts.compare ? ['reference', 'ranked'] : [modeOf(cmd)];
        const results: EvalResult[] = [];
        for (const mode of modes) {
          const bar = progressBar(`eval ${mode}`);
          try {
            results.push(
              await runEval({
                questions,
                trajectoriesDir: opts.trajectories,
                mode,
                onProgress: (d, t) => bar.update(d, t),
              }),
            );
          } finally {
            bar.done();
          }
        }
        emit(g, opts.compare ? { results } : results[0], human);
      },
    );
}
