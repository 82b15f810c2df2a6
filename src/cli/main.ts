import { Command, CommanderError, Help } from 'commander';
import { packageJson } from '../fs/package-root.js';
import { UsageError } from '../protocol/errors.js';
import { type CommandEntry, commandName, commandTable } from './commands/index.js';
import { reportError } from './context.js';
import { helpText } from './help-text.js';

function version(): string {
  return packageJson().version;
}

/**
 * Builds the `contextfold` program. With `argv`, only the module of the command it names is
 * loaded; for help or an unknown name, none (the commands are listed from the table).
 */
export async function buildProgram(argv?: string[]): Promise<Command> {
  const json = argv?.includes('--json') ?? false;
  const program = new Command('contextfold')
    // Parser errors are reported by main() like every other error (one line, or one JSON
    // object with --json); commander prints nothing itself. Set before the commands are added
    // so every subcommand inherits it.
    .configureOutput({
      outputError: () => {},
      ...(json ? { writeErr: () => {} } : {}),
    })
    .description(
      'IPCF-1.1 context folding: lossless, hash-verified cold storage and passive page-in for long agent sessions.',
    )
    .version(version())
    .option('--dir <DIR>', 'store directory', '.contextfold')
    .option(
      '--store <URL|DIR>',
      'where the store lives: a directory, or postgres://user@host:port/db?store_id=NAME (default: $CONTEXTFOLD_STORE, else --dir)',
    )
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
    .addHelpText('after', GLOBAL_HELP)
    .exitOverride();
  const one = argv ? commandTable.find((c) => c.name === commandFor(argv)) : undefined;
  if (one) await register(program, one);
  else if (argv) listCommands(program);
  else for (const c of commandTable) await register(program, c);
  return program;
}

/** The command argv runs, or asks help for (`help scan`). */
function commandFor(argv: string[]): string | undefined {
  const name = commandName(argv);
  return name === 'help' ? commandName(argv.slice(argv.indexOf('help') + 1)) : name;
}

async function register(program: Command, c: CommandEntry): Promise<void> {
  (await c.load()).register(program);
  program.commands.find((cmd) => cmd.name() === c.name)?.description(c.about);
}

/**
 * Every command as a line of help, no module loaded: for `--help`, a missing command and an
 * unknown one (commander's suggestion needs only the names). Nothing here can run.
 */
function listCommands(program: Command): void {
  const terms = new Map(commandTable.map((c) => [c.name, c.term]));
  const help = new Help();
  program.configureHelp({
    subcommandTerm: (cmd) => terms.get(cmd.name()) ?? help.subcommandTerm(cmd),
  });
  for (const c of commandTable) program.command(c.name).description(c.about);
}

const GLOBAL_HELP = helpText({
  notes: [
    'Read commands (scan, recall, hydrate, evict, status, validate, compact, reindex, repair,',
    'export, pack, mcp) need an existing store: on a directory without one they say so and exit 1.',
    'fold, import, session and the Claude Code hook create it.',
    '',
    "Text arguments: PROMPT (scan), QUERY (recall) and SUMMARY (fold) may be '-' to read standard",
    'input, or come from a file with --prompt-file / --query-file / --summary-file (one trailing',
    'line break is dropped). Use these for texts over the OS argument limit (128 KB).',
    '',
    'Errors: one line on stderr and a non-zero exit (1 usage, 2 not found, 3 integrity, 4 orphan,',
    '5 broken reference). With --json, stdout carries exactly one JSON object, the result or the',
    'error ({"error", "code", "message", ...}).',
    '',
  ],
  examples: [
    'contextfold fold 37 "PostgreSQL configured on port 5433" --file turn37.log',
    'echo "postgres port?" | contextfold scan - --json',
    'contextfold --dir path/to/.contextfold status',
    "contextfold --store 'postgres://cf@db:5432/contextfold?store_id=web' status   (docs/team.md)",
  ],
  footer: ['', 'Docs: docs/cli.md (in the repository and the package).'],
});

/**
 * Commander's message as one line: `error: ` dropped, suggestion lines joined, and the help to
 * see: the command's own when argv names one (an unknown flag of `scan` is `scan --help`'s),
 * the main help for an unknown command or a global option (`--dir`), which only it lists.
 */
function parserMessage(e: CommanderError, argv: string[], globalFlags: string[]): string {
  const text = e.message
    .replace(/^error: /, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .join(' ');
  const name = commandFor(argv);
  const own =
    e.code !== 'commander.unknownCommand' &&
    !globalFlags.some((f) => text.includes(`option '${f}'`)) &&
    commandTable.some((c) => c.name === name);
  return `${text} (see contextfold ${own ? `${name} ` : ''}--help)`;
}

/**
 * `help NAME` for a command that does not exist: commander would print the whole help on stderr
 * and exit 1 (with --json, "no command given"); one line naming the unknown command says more.
 */
function refuseUnknownHelpTopic(argv: string[]): void {
  if (commandName(argv) !== 'help') return;
  const name = commandFor(argv);
  if (name === undefined || name === 'help' || commandTable.some((c) => c.name === name)) return;
  throw new UsageError(`unknown command '${name}' (see contextfold --help)`);
}

/** Runs the CLI with the given argv (without node and script). Resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  let program: Command | undefined;
  try {
    refuseUnknownHelpTopic(argv);
    program = await buildProgram(argv);
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version exit 0. Help shown for a missing command (exit 1) was already printed
      // (on stderr) without --json; with --json it becomes the error object.
      if (e.exitCode === 0) return 0;
      if (e.code === 'commander.help') {
        if (!json) return 1;
        return reportError(new UsageError('no command given (see contextfold --help)'), json);
      }
      return reportError(
        new UsageError(parserMessage(e, argv, program?.options.map((o) => o.flags) ?? []), {
          parser: e.code,
        }),
        json,
      );
    }
    return reportError(e, json);
  }
}
