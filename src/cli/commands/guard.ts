import type { Command } from 'commander';
import {
  buildGuardDeclaration,
  type GuardDeclaration,
  type GuardRunReport,
  runGuardConformance,
  validateGuardDeclaration,
} from '../../guard/conformance.js';
import { type GuardScanResult, scanInput } from '../../guard/scan-input.js';
import type { Severity } from '../../guard/types.js';
import { UsageError } from '../../protocol/errors.js';
import { emit, globals, setExitCode } from '../context.js';
import { helpText } from '../help-text.js';
import { readInput } from '../input.js';

const RANK: Record<Severity, number> = { low: 0, medium: 1, high: 2 };

const humanScan = (r: GuardScanResult & { file: string }): string => {
  const form = r.utf16
    ? ` (UTF-16${r.utf16.toUpperCase()} with a BOM: scanned as text)`
    : r.utf8
      ? ''
      : ' (not UTF-8: well-formed runs scanned)';
  const head = `${r.file}: ${r.bytes} bytes${form}, ${r.findings.length} finding(s)`;
  const lines = r.findings.map(
    (f) =>
      `  ${f.severity.padEnd(6)} ${f.pattern_id.padEnd(34)} bytes ${f.start}–${f.end}${f.value_sha256 ? `  value sha256 ${f.value_sha256.slice(0, 16)}…` : ''}`,
  );
  return [head, ...lines].join('\n');
};

function humanDeclaration(report: GuardRunReport, d: GuardDeclaration): string {
  const c = d.counts;
  const lines = [
    `${d.runtime.name} ${d.runtime.version} · guard corpus ${d.corpus.name} ${d.corpus.version} (${d.corpus.content_sha256.slice(0, 12)}…)`,
    `declared tables: ${d.declared_tables.join(', ')}`,
    `${c.pass} passed, ${c.fail} failed, ${c.not_applicable} not-applicable, ${c.error} error, of ${c.total}`,
  ];
  for (const n of d.non_passing) lines.push(`  ${n.verdict.padEnd(14)} ${n.case_id}: ${n.reason}`);
  if (d.non_passing.length === 0) lines.push(`every case passed (${report.cases.length})`);
  return lines.join('\n');
}

const SCAN_HELP = helpText({
  notes: [
    'Findings carry the pattern id (as published in guard/), its table and severity, and byte',
    'offsets in the input. Secret values are never printed: a secret finding carries the SHA-256 of',
    'the value. UTF-16 with a byte-order mark (FF FE, FE FF) is scanned as text; other bytes that',
    'are not UTF-8 in their well-formed UTF-8 runs.',
  ],
  examples: [
    'contextfold guard scan page.html',
    'curl -s https://example.com | contextfold guard scan - --json --fail-on high',
  ],
});

/** `contextfold guard`: scan a text with the guard's tables; run the guard corpus. */
export function register(program: Command): void {
  const guard = program.command('guard').addHelpText(
    'after',
    helpText({
      examples: ['contextfold guard scan page.html --json', 'contextfold guard conformance'],
    }),
  );

  guard
    .command('scan')
    .description('scan a file (or - for stdin) with every guard table and list the findings')
    .argument('<FILE>', "the file to scan, or '-' for standard input (read as bytes)")
    .option(
      '--fail-on <SEVERITY>',
      'exit 1 when a finding is at least this severe: low, medium, high',
    )
    .addHelpText('after', SCAN_HELP)
    .action(async (file: string, opts: { failOn?: string }, cmd: Command) => {
      const g = globals(cmd);
      if (opts.failOn !== undefined && !(opts.failOn in RANK)) {
        throw new UsageError(`--fail-on must be low, medium or high, got '${opts.failOn}'`);
      }
      const r = await scanInput(readInput(file));
      emit(g, { file, ...r }, humanScan);
      const bar = opts.failOn === undefined ? null : RANK[opts.failOn as Severity];
      if (bar !== null && r.findings.some((f) => RANK[f.severity] >= bar)) setExitCode(1);
    });

  guard
    .command('conformance')
    .description('run the guard corpus (guard/conformance) and print the declaration')
    .addHelpText(
      'after',
      `
Every case ends pass, fail, not-applicable (scoped to a table outside the declared set) or
error (altered input, unknown match, malformed fixture); none is skipped. With --json the
output is the declaration (schemas/guard-declaration.schema.json). Exit 1 if any case failed
or errored.

Examples:
  contextfold guard conformance
  contextfold guard conformance --json > guard-declaration.json`,
    )
    .action(async (_opts, cmd: Command) => {
      const g = globals(cmd);
      const report = await runGuardConformance();
      const decl = buildGuardDeclaration(report);
      const problems = validateGuardDeclaration(decl);
      if (problems.length > 0)
        throw new Error(`the declaration is invalid: ${problems.join('; ')}`);
      if (g.json) emit(g, decl, () => '');
      else process.stdout.write(`${humanDeclaration(report, decl)}\n`);
      if (decl.counts.fail > 0 || decl.counts.error > 0) setExitCode(1);
    });
}
