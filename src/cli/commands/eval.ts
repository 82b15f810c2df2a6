import type { Command } from 'commander';
import { loadHookProbes, runHookEval } from '../../adapters/claude-code/hook-eval.js';
import type { RetrievalMode } from '../../engine/types.js';
import { runAblations } from '../../eval/ablations.js';
import { loadQuestions } from '../../eval/load.js';
import { fitRanked, leaveOneSessionOut } from '../../eval/loso.js';
import type { EvalRetriever } from '../../eval/retrievers.js';
import { runEval, validateQuestions } from '../../eval/run-eval.js';
import type { EvalQuestion, EvalResult } from '../../eval/types.js';
import { UsageError } from '../../protocol/errors.js';
import type { NodeAnalysis } from '../../retrieval/node-analysis.js';
import { emit, globals } from '../context.js';
import { helpText } from '../help-text.js';
import { progressBar } from '../progress.js';
import { type EvalReport, renderEvalReport } from './eval-render.js';

/** The mode `eval` measures when `--retrieval` is not given: the better page-in. */
export const DEFAULT_EVAL_MODE: RetrievalMode = 'ranked';

interface EvalOpts {
  questions?: string[];
  trajectories?: string;
  compare?: boolean;
  baseline: boolean;
  loso?: boolean;
  fit?: boolean;
  hook?: boolean;
  ablations?: boolean;
  probes: string;
  transcripts: string;
}

function modeOf(cmd: Command): RetrievalMode {
  const o = cmd.optsWithGlobals() as { retrieval?: string };
  if (o.retrieval === undefined) return DEFAULT_EVAL_MODE;
  if (o.retrieval !== 'reference' && o.retrieval !== 'ranked') {
    throw new UsageError(`--retrieval must be 'reference' or 'ranked', got '${o.retrieval}'`);
  }
  return o.retrieval;
}

function retrieversOf(opts: EvalOpts, cmd: Command): EvalRetriever[] {
  const modes: RetrievalMode[] = opts.compare ? ['ranked', 'reference'] : [modeOf(cmd)];
  const out: EvalRetriever[] = modes.map((mode) => ({ kind: 'engine', mode }));
  if (opts.baseline) out.push({ kind: 'bm25-chunks' });
  return out;
}

async function measure(
  file: string,
  questions: EvalQuestion[],
  opts: EvalOpts,
  retrievers: EvalRetriever[],
  analyses: Map<string, NodeAnalysis>,
): Promise<EvalReport['sets'][number]> {
  const trajectoriesDir = opts.trajectories!;
  const results: EvalResult[] = [];
  for (const retriever of retrievers) {
    const bar = progressBar(
      `eval ${retriever.kind === 'engine' ? retriever.mode : retriever.kind}`,
    );
    try {
      results.push(
        await runEval({
          questions,
          trajectoriesDir,
          retriever,
          onProgress: (d, t) => bar.update(d, t),
        }),
      );
    } finally {
      bar.done();
    }
  }
  const set: EvalReport['sets'][number] = { questions: file, results };
  if (opts.loso) {
    set.loso = await leaveOneSessionOut({ questions, trajectoriesDir, analyses });
  }
  return set;
}

const HELP = helpText({
  notes: [
    'Measures the mode given by --retrieval (default: ranked) and the BM25 chunk baseline',
    '(400-token chunks filling the budget) on each questions file. Output is aggregates only',
    '(by kind, by session family); --json adds per-question rows (ids and paged steps).',
    'Temporary stores are removed. Bad input (a questions file that does not validate, a',
    'missing trajectory, a step out of range): one line, exit 1.',
    '',
  ],
  examples: [
    [
      'contextfold eval --questions ../shared/eval/questions.public.json \\',
      '  --trajectories ../shared/data/trajectories --loso --hook',
    ],
  ],
});

/** `contextfold eval`. */
export function register(program: Command): void {
  program
    .command('eval')
    .option(
      '--questions <FILE...>',
      'questions JSON ({ questions: [...] } or an array); several allowed',
    )
    .option('--trajectories <DIR>', 'directory of <trajectory>.jsonl turn files')
    .option('--compare', "measure both 'ranked' and 'reference' (ignores --retrieval)")
    .option('--no-baseline', 'skip the BM25 chunk baseline (measured beside by default)')
    .option('--loso', 'leave-one-session-out figures of the learned ranked scorer')
    .option('--fit', 'fit weights and selection on all the questions (to regenerate the defaults)')
    .option('--hook', 'replay Claude Code transcripts through the hook and score the probes')
    .option(
      '--ablations',
      'retrain without each component (trained on the first questions file) and measure every file; with --loso, each row also leave-one-session-out',
    )
    .option('--probes <FILE>', 'hook probes JSON', 'eval/hook-probes.json')
    .option(
      '--transcripts <DIR>',
      'directory of the probes’ transcripts',
      '../shared/data/raw/claude-code',
    )
    .addHelpText('after', HELP)
    .action(async (opts: EvalOpts, cmd: Command) => {
      const g = globals(cmd);
      const files = opts.questions ?? [];
      if (files.length === 0 && !opts.hook) {
        throw new UsageError('eval needs --questions FILE (and --trajectories DIR), or --hook');
      }
      if (files.length > 0 && opts.trajectories === undefined) {
        throw new UsageError('eval --questions needs --trajectories DIR (the <name>.jsonl turns)');
      }
      // Validate everything first: bad input fails before anything is measured or printed.
      const sets = files.map((f) => ({ file: f, questions: loadQuestions(f) }));
      for (const s of sets) validateQuestions(s.questions, opts.trajectories!);
      const probes = opts.hook ? loadHookProbes(opts.probes, opts.transcripts) : undefined;
      const retrievers = retrieversOf(opts, cmd);
      const analyses = new Map<string, NodeAnalysis>();
      const report: EvalReport = { sets: [] };
      for (const s of sets) {
        report.sets.push(await measure(s.file, s.questions, opts, retrievers, analyses));
      }
      if (report.sets.length === 1 && report.sets[0]!.results[0]) {
        report.summary = report.sets[0]!.results[0].summary;
      }
      if (opts.fit) {
        report.fit = await fitRanked({
          questions: sets.flatMap((s) => s.questions),
          trajectoriesDir: opts.trajectories!,
          analyses,
        });
      }
      if (opts.ablations && sets.length > 0) {
        report.ablations = await runAblations({
          train: sets[0]!.questions,
          sets: sets.map((s) => ({ name: s.file, questions: s.questions })),
          trajectoriesDir: opts.trajectories!,
          loso: opts.loso === true,
        });
      }
      if (probes) {
        report.hook = await runHookEval({ probes, transcriptsDir: opts.transcripts });
      }
      emit(g, report, renderEvalReport);
    });
}
