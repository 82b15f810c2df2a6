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

interface Options {
  subject?: string;
  profile: string;
  corpus?: string;
  timeout?: string;
}

/** `contextfold conformance`: runs the IPCF-1.1 corpus against a subject, prints the declaration. */
export function register(program: Command): void {
  program
    .command('conformance')
    .description(
      'run the IPCF-1.1 conformance corpus against a subject (default: this library, in-process) and print the verdict table or, with --json, the declaration',
    )
    .option(
      '--subject <CMD>',
      'shell command that starts a subject speaking ipcf-subject/1 (see conformance/PROTOCOL.md)',
    )
    .option('--profile <P>', 'corpus profile: full, store, harness or safety', 'full')
    .option('--corpus <DIR>', 'corpus directory (default: the corpus shipped with contextfold)')
    .option('--timeout <MS>', 'per-request timeout for a --subject process, in ms', '60000')
    .addHelpText(
      'after',
      `
Every case runs in a fresh temporary directory and ends pass, fail, not-applicable (a
requirement outside the subject's declared set) or error (could not run); none is skipped.
Exit code 0 when no case failed or errored, 1 otherwise.
Examples:
  contextfold conformance
  contextfold conformance --json > declaration.json
  contextfold conformance --subject "python3 my_subject.py" --profile store`,
    )
    .action(async (opts: Options, cmd: Command) => {
      const g = globals(cmd);
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
          profile: opts.profile,
          onCase: g.json
            ? undefined
            : (o, i, n) => {
                if (process.stderr.isTTY)
                  process.stderr.write(`\r${i + 1}/${n} ${o.case_id}`.padEnd(90).slice(0, 90));
              },
        });
      } finally {
        if (!g.json && process.stderr.isTTY) process.stderr.write('\r'.padEnd(91) + '\r');
        await subject.close();
      }
      const decl = buildDeclaration(report);
      const problems = validateDeclaration(decl, corpusDir);
      if (problems.length > 0)
        throw new Error(`the declaration is invalid: ${problems.join('; ')}`);
      if (g.json) process.stdout.write(`${JSON.stringify(decl)}\n`);
      else process.stdout.write(formatReport(report, decl));
      if (decl.counts.fail > 0 || decl.counts.error > 0) setExitCode(1);
    });
}
