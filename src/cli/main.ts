import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { commandName, commandTable } from './commands/index.js';
import { reportError } from './context.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/**
 * Builds the `contextfold` program. With `argv`, only the module of the command it names is
 * loaded (all of them for help or an unknown name).
 */
export async function buildProgram(argv?: string[]): Promise<Command> {
  const program = new Command('contextfold')
    .description(
      'IPCF-1.1 context folding: lossless, hash-verified cold storage and passive page-in for long agent sessions.',
    )
    .version(version())
    .option('--dir <DIR>', 'store directory', '.contextfold')
    .option('--json', 'print one JSON object per result')
    .option(
      '--tokenizer <NAME>',
      "token counter for caps: 'o200k' (default) or 'reference' (codepoints // 4)",
    )
    .option(
      '--retrieval <MODE>',
      "page-in algorithm: 'ranked' (default) or 'reference' (IPCF RGSC)",
    )
    .option('--session <ID>', 'session_id written into new cold nodes', 'default-session')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  const name = argv ? commandName(argv) : undefined;
  const one = commandTable.find((c) => c.name === name);
  for (const c of one ? [one] : commandTable) (await c.load()).register(program);
  return program;
}

/** Runs the CLI with the given argv (without node and script). Resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  try {
    const program = await buildProgram(argv);
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit 0; commander already printed its one-line message otherwise.
      return e.exitCode === 0 ? 0 : 1;
    }
    return reportError(e, json);
  }
}
