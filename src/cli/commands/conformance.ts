import type { Command } from 'commander';
import { DEFAULT_CORPUS_DIR } from '../../conformance/corpus.js';
import { buildDeclaration, validateDeclaration } from '../../conformance/declaration.js';
import { formatReport } from '../../conformance/format.js';
import { LibrarySubject } from '../../conformance/library-subject.js';
import { spawnSubject } from '../../conformance/process-subject.js';
import { runConformance } from '../../conformance/runner.js';
import type { Subject } from '../../conformance/types.js';
import { UsageError } from '../../protocol/errors.js';
import { globals, parseIntArg, setExitCode } from '../context.js';
import { helpText } from '../help-text.js';

interface Options {
  subject?: string;
  profile?: string;
  corpus?: string;
  timeout?: string;
  adapters?: boolean;
  adapter?: string;
  spec?: string;
  cases?: string;
}

/** `--adapters`: every integration over the adapter acceptance cases; prints the adapters' table. */
async function runAdapters(opts: Options, json: boolean): Promise<void> {
  if (opts.subject !== undefined) {
    throw new UsageError('--subject scores an engine; --adapters scores the integrations: use one');
  }
  // Loaded here: the subjects pull in the optional peers (AI SDK, MCP SDK) only for this run.
  const a = await import('../../acceptance/index.js');
  const all = a.defaultSubjects();
  const names = opts.adapter?.split(',').map((n) => n.trim());
  const unknown = names?.find((n) => !all.some((s) => s.name === n));
  if (unknown) {
    throw new UsageError(`unknown adapter '${unknown}': use ${all.map((s) => s.name).join(', ')}`);
  }
  const subjects = names ? all.filter((s) => names.includes(s.name)) : all;
  const tty = !json && process.stderr.isTTY;
  const report = await a.runAdapterAcceptance({
    subjects,
    ...(opts.corpus !== undefined ? { caseFile: opts.corpus } : {}),
    ...(opts.profile !== undefined ? { profile: opts.profile } : {}),
    ...(opts.cases !== undefined ? { cases: opts.cases.split(',') } : {}),
    specDir: opts.spec ?? process.env.CONTEXTFOLD_SPEC_DIR ?? null,
    onCase: tty
      ? (adapter, id, i, n) =>
          process.stderr.write(`\r${adapter} ${i + 1}/${n} ${id}`.padEnd(90).slice(0, 90))
      : undefined,
  });
  if (tty) process.stderr.write('\r'.padEnd(91) + '\r');
  const decl = a.buildAdapterDeclaration(report);
  const problems = a.validateAdapterDeclaration(decl);
  if (problems.length > 0) throw new Error(`the declaration is invalid: ${problems.join('; ')}`);
  process.stdout.write(json ? `${JSON.stringify(decl)}\n` : a.formatAdapterTable(decl));
  if (decl.adapters.some((x) => x.counts.fail > 0 || x.counts.error > 0)) setExitCode(1);
}

/** The default run: the IPCF-1.1 corpus against a subject; prints the declaration. */
async function runCorpus(opts: Options, json: boolean): Promise<void> {
  for (const [flag, v] of [
    ['--adapter', opts.adapter],
    ['--cases', opts.cases],
    ['--spec', opts.spec],
  ] as const) {
    if (v !== undefined) throw new UsageError(`${flag} needs --adapters`);
  }
  const corpusDir = opts.corpus ?? DEFAULT_CORPUS_DIR;
  const timeoutMs = parseIntArg(opts.timeout ?? '60000', '--timeout');
  if (opts.subject !== undefined && opts.subject.trim() === '') {
    throw new UsageError('--subject needs a command, e.g. --subject "contextfold subject"');
  }
  const subject: Subject = opts.subject
    ? spawnSubject({ command: opts.subject, timeoutMs })
    : new LibrarySubject();
  let report: Awaited<ReturnType<typeof runConformance>>;
  try {
    report = await runConformance({
      subject,
      corpusDir,
      profile: opts.profile ?? 'full',
      onCase: json
        ? undefined
        : (o, i, n) => {
            if (process.stderr.isTTY)
              process.stderr.write(`\r${i + 1}/${n} ${o.case_id}`.padEnd(90).slice(0, 90));
          },
    });
  } finally {
    if (!json && process.stderr.isTTY) process.stderr.write('\r'.padEnd(91) + '\r');
    await subject.close();
  }
  const decl = buildDeclaration(report);
  const problems = validateDeclaration(decl, corpusDir);
  if (problems.length > 0) throw new Error(`the declaration is invalid: ${problems.join('; ')}`);
  if (json) process.stdout.write(`${JSON.stringify(decl)}\n`);
  else process.stdout.write(formatReport(report, decl));
  if (decl.counts.fail > 0 || decl.counts.error > 0) setExitCode(1);
}

const HELP = helpText({
  notes: [
    'Every case runs in a fresh temporary directory and ends pass, fail, not-applicable (a',
    "requirement outside the subject's declared set) or error (could not run); none is skipped.",
    'Exit code 0 when no case failed or errored, 1 otherwise.',
    'With --adapters, each integration is driven through its own entry point over',
    'conformance/adapters/cases.v1.json; the table has one row per adapter (counts,',
    'safety and liveness passes, declared strictnesses) and every case that did not pass.',
  ],
  examples: [
    'contextfold conformance',
    'contextfold conformance --json > declaration.json',
    'contextfold conformance --subject "python3 my_subject.py" --profile store',
    'contextfold conformance --adapters',
    'contextfold conformance --adapters --adapter claude-code-hook --json',
  ],
});

/** `contextfold conformance`: runs the IPCF-1.1 corpus against a subject, prints the declaration. */
export function register(program: Command): void {
  program
    .command('conformance')
    .option(
      '--subject <CMD>',
      'shell command that starts a subject speaking ipcf-subject/1 (see conformance/PROTOCOL.md)',
    )
    .option(
      '--profile <P>',
      'corpus profile: full (default), store, harness or safety; with --adapters: normative (default) or safety',
    )
    .option(
      '--corpus <PATH>',
      'corpus directory, or with --adapters the case file (default: the one shipped with contextfold)',
    )
    .option('--timeout <MS>', 'per-request timeout for a --subject process, in ms', '60000')
    .option(
      '--adapters',
      "run every integration (Session, AI SDK middleware, MCP server, Claude Code hook, API proxy) over the adapter acceptance cases and print the adapters' table",
    )
    .option('--adapter <NAMES>', 'with --adapters: only these adapters (comma-separated)')
    .option('--cases <IDS>', 'with --adapters: only these cases (comma-separated)')
    .option(
      '--spec <DIR>',
      'with --adapters: the specification texts, to check spec source anchors (default $CONTEXTFOLD_SPEC_DIR)',
    )
    .addHelpText('after', HELP)
    .action(async (opts: Options, cmd: Command) => {
      const { json } = globals(cmd);
      if (opts.adapters) return runAdapters(opts, json);
      return runCorpus(opts, json);
    });
}
