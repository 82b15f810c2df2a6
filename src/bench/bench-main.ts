/**
 * Runs a bench script's `main`: a failure is one line on stderr, pointing at `--help` when an
 * option did not parse, and exit code 1 (a bench is run by people: no stack trace for a typo).
 *
 * @example
 * runBenchMain('fold-scan', main);
 */
export function runBenchMain(name: string, main: () => Promise<void>): void {
  main().catch((e) => {
    const usage = String((e as { code?: unknown })?.code).startsWith('ERR_PARSE_ARGS');
    const message = e instanceof Error ? e.message : String(e);
    process.stderr.write(`${name}: ${message}${usage ? ' (see --help)' : ''}\n`);
    process.exitCode = 1;
  });
}
