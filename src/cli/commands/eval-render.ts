import type { HookEvalResult } from '../../adapters/claude-code/hook-eval.js';
import type { AblationRow } from '../../eval/ablations.js';
import type { FitResult, LosoResult } from '../../eval/loso.js';
import type { EvalResult, GroupSummary } from '../../eval/types.js';

/** The results of one questions file. */
export interface EvalSetReport {
  questions: string;
  results: EvalResult[];
  loso?: LosoResult;
}

/** Everything one `contextfold eval` run measured. */
export interface EvalReport {
  sets: EvalSetReport[];
  /**
   * With one questions file: the measured mode's summary of it (the first result), for scripts
   * that read one set of figures (`hit_rate`, `token_precision`…) at the top level.
   */
  summary?: EvalSetReport['results'][number]['summary'];
  hook?: HookEvalResult;
  fit?: FitResult;
  ablations?: AblationRow[];
}

const pct = (x: number | null | undefined): string =>
  x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)}%`;

function table(head: string[], rows: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [fmt(head), ...rows.map(fmt)].map((l) => `  ${l.trimEnd()}`);
}

const group = (g: GroupSummary | undefined): string =>
  g ? `${pct(g.hit_rate)} / ${pct(g.latest_hit_rate_evolving)} / ${pct(g.token_precision)}` : '-';

/** A breakdown of the results (by kind, by family): a row per key any mode has, a column per mode. */
function breakdown<T>(
  rs: EvalResult[],
  title: string,
  of: (r: EvalResult) => Record<string, T>,
  cell: (value: T | undefined) => string,
): string[] {
  const keys = [...new Set(rs.flatMap((r) => Object.keys(of(r))))].sort();
  const rows = keys.map((k) => [k, ...rs.map((r) => cell(of(r)[k]))]);
  return [`  ${title}:`, ...table(['', ...rs.map((r) => r.mode)], rows).map((l) => `  ${l}`)];
}

function setLines(set: EvalSetReport): string[] {
  const rs = set.results;
  const n = rs[0]?.summary.questions ?? 0;
  const lines = [`${set.questions} (${n} questions)`];
  const metric = (name: string, f: (r: EvalResult) => string) => [name, ...rs.map(f)];
  lines.push(
    ...table(
      ['', ...rs.map((r) => r.mode)],
      [
        metric('hit_rate', (r) => pct(r.summary.hit_rate)),
        metric('latest_hit_rate_evolving', (r) => pct(r.summary.latest_hit_rate_evolving)),
        metric('token_precision', (r) => pct(r.summary.token_precision)),
        metric('mean_pages', (r) => r.summary.mean_pages.toFixed(2)),
        metric('mean_tokens', (r) => r.summary.mean_tokens.toFixed(0)),
        metric('no_page_rate', (r) => pct(r.summary.no_page_rate)),
        metric('scan p50 / p99 ms', (r) => {
          const l = r.summary.scan_latency_ms;
          return `${l.p50} / ${l.p99}`;
        }),
      ],
    ),
  );
  lines.push(
    ...breakdown(rs, 'by kind (hit rate)', (r) => r.summary.by_kind, pct),
    ...breakdown(rs, 'by family (hit / latest / precision)', (r) => r.summary.by_family, group),
  );
  if (set.loso) {
    const s = set.loso.summary;
    lines.push(
      `  leave-one-session-out (ranked, weights and selection fitted without the session): hit ${pct(s.hit_rate)}, latest ${pct(s.latest_hit_rate_evolving)}, precision ${pct(s.token_precision)}, ${s.mean_tokens.toFixed(0)} tokens`,
    );
    for (const f of set.loso.folds) lines.push(`    ${f.session}: ${group(f.summary)}`);
  }
  return lines;
}

function hookLines(h: HookEvalResult): string[] {
  return [
    `hook probes (${h.summary.probes} over ${Object.keys(h.summary.by_transcript).length} transcripts, through runHook)`,
    `  answer in additionalContext  ${pct(h.summary.hit_rate)}`,
    `  bytes mean / max             ${h.summary.mean_bytes.toFixed(0)} / ${h.summary.max_bytes}`,
    `  no context                   ${pct(h.summary.no_context_rate)}`,
    ...Object.entries(h.summary.by_transcript).map(([t, s]) => `    ${t}: ${s.hits}/${s.probes}`),
  ];
}

function ablationLines(rows: readonly AblationRow[]): string[] {
  const sets = rows[0]?.sets.map((s) => s.questions) ?? [];
  const cell = (x: EvalSummaryLike) =>
    `${pct(x.hit_rate)} / ${pct(x.latest_hit_rate_evolving)} / ${pct(x.token_precision)} / ${x.mean_tokens.toFixed(0)}`;
  const loso = rows.some((r) => r.loso);
  return [
    'ablations (weights retrained without each component; hit / latest / precision / tokens):',
    ...table(
      ['without', ...sets, ...(loso ? [`leave-one-session-out (${sets[0]})`] : [])],
      rows.map((r) => [
        r.name,
        ...r.sets.map((s) => cell(s.summary)),
        ...(loso ? [r.loso ? cell(r.loso) : ''] : []),
      ]),
    ),
  ];
}

type EvalSummaryLike = Pick<
  GroupSummary,
  'hit_rate' | 'latest_hit_rate_evolving' | 'token_precision' | 'mean_tokens'
>;

/**
 * The human rendering of an eval report: one table per questions file (a column per retriever),
 * leave-one-session-out figures, hook probes. Only aggregates: no question is printed.
 */
export function renderEvalReport(r: EvalReport): string {
  const blocks = r.sets.map((s) => setLines(s).join('\n'));
  if (r.ablations) blocks.push(ablationLines(r.ablations).join('\n'));
  if (r.hook) blocks.push(hookLines(r.hook).join('\n'));
  if (r.fit) {
    blocks.push(
      [
        'fitted on these questions (paste into src/retrieval/ranked-weights.ts and RANKED_DEFAULTS):',
        `  weights ${JSON.stringify(r.fit.weights)}`,
        `  selection ${JSON.stringify(r.fit.selection)}`,
      ].join('\n'),
    );
  }
  return blocks.join('\n\n');
}
