import type { Declaration, RunReport } from './types.js';

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

/**
 * The human table of a run: one row per case (verdict, class, id, reason), then the counts and
 * the corpus identity. Every case is listed, passing ones included.
 *
 * @example
 * process.stdout.write(formatReport(report, buildDeclaration(report)));
 */
export function formatReport(report: RunReport, decl: Declaration, width = 100): string {
  const idWidth = Math.max(...report.cases.map((c) => c.case_id.length), 4);
  const lines: string[] = [];
  lines.push(`${pad('VERDICT', 14)} ${pad('CLASS', 8)} ${pad('CASE', idWidth)}  REASON`);
  for (const c of report.cases) {
    const reason = c.reason.length > width ? `${c.reason.slice(0, width - 3)}...` : c.reason;
    lines.push(
      `${pad(c.verdict, 14)} ${pad(c.class, 8)} ${pad(c.case_id, idWidth)}  ${reason}`.trimEnd(),
    );
  }
  const k = decl.counts;
  lines.push('');
  lines.push(
    `${decl.runtime.name} ${decl.runtime.version} · corpus ${decl.corpus.name} ${decl.corpus.version} (${decl.corpus.content_sha256.slice(0, 12)}…) · profile ${decl.profile}`,
  );
  lines.push(
    `pass ${k.pass} · fail ${k.fail} · not-applicable ${k.not_applicable} · error ${k.error} · total ${k.total}`,
  );
  lines.push(`declared requirements: ${decl.declared_requirements.join(' ') || '(none)'}`);
  const strict = decl.declared_strictnesses;
  lines.push(
    `declared strictnesses: ${strict.length ? strict.map((s) => `${s.conjunct} (${s.applied_in.length} case(s))`).join(', ') : '(none)'}`,
  );
  return `${lines.join('\n')}\n`;
}
