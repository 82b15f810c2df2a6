import { Command, Help } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram } from '../main.js';
import { type CommandEntry, commandTable } from './index.js';

describe('the command table', () => {
  it.each(commandTable.map((c) => [c.name, c] as const))(
    "%s: the table's help line is the one its module defines",
    async (name, c) => {
      const program = new Command('contextfold');
      (await c.load()).register(program);
      const cmd = program.commands.find((x) => x.name() === name);
      expect(cmd, `module of ${name} registers '${name}'`).toBeDefined();
      expect(new Help().subcommandTerm(cmd!)).toBe(c.term);
    },
  );

  it('names every command once', () => {
    const names = commandTable.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('contextfold --help lists the commands without loading them', () => {
  const loads = commandTable.map((c) => c.load);
  let loaded: string[] = [];
  const count = (c: CommandEntry, i: number) => {
    c.load = () => {
      loaded.push(c.name);
      return loads[i]!();
    };
  };
  afterEach(() => {
    commandTable.forEach((c, i) => {
      c.load = loads[i]!;
    });
    loaded = [];
  });

  it('prints the same help as a program with every module loaded', async () => {
    const full = (await buildProgram()).helpInformation();
    commandTable.forEach(count);
    for (const argv of [['--help'], ['help'], ['--json', '-h'], []]) {
      expect((await buildProgram(argv)).helpInformation()).toBe(full);
    }
    expect(loaded).toEqual([]);
  });

  it('loads only the module asked about for `help <command>` and `<command> --help`', async () => {
    commandTable.forEach(count);
    const help = (await buildProgram(['help', 'scan'])).commands.find((c) => c.name() === 'scan');
    expect(help?.description()).toBe(commandTable.find((c) => c.name === 'scan')?.about);
    await buildProgram(['--dir', 'x', 'status', '--help']);
    expect(loaded).toEqual(['scan', 'status']);
  });
});
