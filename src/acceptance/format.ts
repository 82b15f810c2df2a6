import type { AdapterDeclaration } from './declaration.js';

const pad = (s: string | number, n: number) => String(s).padEnd(n);
const padL = (s: string | number, n: number) => String(s).padStart(n);

/**
 * The adapters' table as `contextfold conformance --adapters` prints it: one row per adapter
 * (verdict counts, safety and liveness passes, strictnesses it declared and what they excused),
 * then every case that did not pass, per adapter, with its reason.
 *
 * @example
 * process.stdout.write(formatAdapterTable(buildAdapterDeclaration(report)));
 */
export function formatAdapterTable(decl: AdapterDeclaration, width = 110): string {
  const w = Math.max(7, ...decl.adapters.map((a) => a.adapter.length));
  const lines: string[] = [];
  lines.push(
    `${pad('ADAPTER', w)}  ${padL('PASS', 4)}  ${padL('FAIL', 4)}  ${padL('N/A', 4)}  ${padL('ERROR', 5)}  ${padL('TOTAL', 5)}  ${pad('SAFETY', 7)}  ${pad('LIVENESS', 8)}  STRICTNESSES`,
  );
  for (const a of decl.adapters) {
    const k = a.counts;
    const s = a.by_class.safety;
    const l = a.by_class.liveness;
    const strict =
      a.declared_strictnesses
        .map((x) => `${x.conjunct} (excused ${x.applied_in.length})`)
        .join(', ') || '-';
    lines.push(
      `${pad(a.adapter, w)}  ${padL(k.pass, 4)}  ${padL(k.fail, 4)}  ${padL(k.not_applicable, 4)}  ${padL(k.error, 5)}  ${padL(k.total, 5)}  ${pad(`${s.pass}/${s.total}`, 7)}  ${pad(`${l.pass}/${l.total}`, 8)}  ${strict}`,
    );
  }
  for (const a of decl.adapters) {
    if (a.non_passing.length === 0) continue;
    lines.push('', `${a.adapter} (${a.entry_point}):`);
    const idw = Math.max(...a.non_passing.map((c) => c.case_id.length));
    for (const c of a.non_passing) {
      const r = c.reason.length > width ? `${c.reason.slice(0, width - 3)}...` : c.reason;
      lines.push(`  ${pad(c.verdict, 14)} ${pad(c.class, 8)} ${pad(c.case_id, idw)}  ${r}`);
    }
  }
  const an = decl.anchors;
  lines.push(
    '',
    `suite ${decl.suite.name} ${decl.suite.version} (${decl.suite.content_sha256.slice(0, 12)}…) · profile ${decl.profile} · ${decl.suite.case_count} cases`,
    `source anchors: ${an.holds} hold, ${an.broken} broken, ${an.unchecked} unchecked${an.unchecked ? ' (no specification text given: --spec DIR)' : ''}`,
  );
  return `${lines.join('\n')}\n`;
}
