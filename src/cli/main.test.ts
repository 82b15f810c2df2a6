import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../test-utils/cli.js';
import { commandTable } from './commands/index.js';

/** The one JSON object a `--json` run printed on stdout (and nothing on stderr). */
function oneJsonObject(r: { stdout: string; stderr: string }): Record<string, unknown> {
  expect(r.stderr).toBe('');
  const lines = r.stdout.split('\n').filter((l) => l.length > 0);
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!);
}

describe('parser errors (commander) are reported like every other error', () => {
  // A command's parser error points at that command's help, where its flags are listed.
  const cases: [string[], RegExp, string][] = [
    [['frob'], /^unknown command 'frob' \(see contextfold --help\)$/, 'commander.unknownCommand'],
    [
      ['scan', 'a', 'b'],
      /^too many arguments for 'scan'.* \(see contextfold scan --help\)$/,
      'commander.excessArguments',
    ],
    [
      ['--bogus', 'status'],
      /^unknown option '--bogus' \(see contextfold status --help\)$/,
      'commander.unknownOption',
    ],
    [
      ['scan', 'x', '--bogus'],
      /^unknown option '--bogus' \(see contextfold scan --help\)$/,
      'commander.unknownOption',
    ],
    [
      ['scan', '--prompt-file'],
      /^option '--prompt-file <FILE>' argument missing \(see contextfold scan --help\)$/,
      'commander.optionMissingArgument',
    ],
    // A global option is listed by the main help only.
    [
      ['status', '--dir'],
      /^option '--dir <DIR>' argument missing \(see contextfold --help\)$/,
      'commander.optionMissingArgument',
    ],
  ];

  it.each(cases)(
    '--json %j: one JSON error object on stdout, exit 1',
    async (args, message, parser) => {
      const r = await runCliInProcess(['--json', ...args]);
      expect(r.code).toBe(1);
      const o = oneJsonObject(r);
      expect(o).toMatchObject({ error: 'UsageError', code: 'USAGE', parser });
      expect(o.message).toMatch(message);
    },
  );

  it.each(cases)('without --json %j: one line on stderr, exit 1', async (args, message) => {
    const r = await runCliInProcess(args);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter((l) => l.length > 0);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.replace(/^contextfold: UsageError: /, '')).toMatch(message);
  });

  it('a misspelt command gets the suggestion on the same line', async () => {
    const r = await runCliInProcess(['fodl']);
    expect(r.stderr).toBe(
      "contextfold: UsageError: unknown command 'fodl' (Did you mean fold?) (see contextfold --help)\n",
    );
  });

  it('help for a command that does not exist is one line, or one JSON object', async () => {
    const r = await runCliInProcess(['help', 'frob']);
    expect(r).toMatchObject({
      code: 1,
      stdout: '',
      stderr: "contextfold: UsageError: unknown command 'frob' (see contextfold --help)\n",
    });
    const json = await runCliInProcess(['--json', 'help', 'frob']);
    expect(oneJsonObject(json)).toMatchObject({
      code: 'USAGE',
      message: "unknown command 'frob' (see contextfold --help)",
    });
    const known = await runCliInProcess(['help', 'fold']);
    expect(known.stdout).toMatch(/^Usage: contextfold fold /);
  });

  it('no command: help on stderr, exit 1; with --json one error object', async () => {
    const plain = await runCliInProcess([]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('Usage: contextfold');
    const json = await runCliInProcess(['--json']);
    expect(json.code).toBe(1);
    expect(oneJsonObject(json)).toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(/^no command given/),
    });
  });

  it('--help and --version still exit 0 on stdout, and the help documents stdin, stores and errors', async () => {
    const help = await runCliInProcess(['--help']);
    expect(help.code).toBe(0);
    for (const text of [
      "'-' to read standard",
      '--prompt-file',
      'need an existing store',
      'With --json, stdout carries exactly one JSON object',
    ])
      expect(help.stdout).toContain(text);
    const version = await runCliInProcess(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
    const sub = await runCliInProcess(['--json', 'scan', '--help']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('--prompt-file');
  });
});

describe('every command has help that helps', () => {
  const commands = [...commandTable.map((c) => c.name), 'guard scan', 'guard conformance'];

  it.each(commands)('%s --help: what it does and at least one example', async (command) => {
    const r = await runCliInProcess([...command.split(' '), '--help']);
    expect(r.code).toBe(0);
    const [usage, blank, about] = r.stdout.split('\n');
    expect(usage).toMatch(/^Usage: contextfold /);
    expect([blank, about?.length]).toEqual(['', expect.any(Number)]);
    expect(about).not.toBe('');
    expect(r.stdout).toMatch(/^Examples?( \(.+\))?:\n {2}\S/m);
  });
});
