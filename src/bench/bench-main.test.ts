import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = (name: string) =>
  fileURLToPath(new URL(`../../dist/bench/${name}.js`, import.meta.url));
const run = (name: string, ...args: string[]) =>
  spawnSync(process.execPath, [script(name), ...args], { encoding: 'utf8', timeout: 30_000 });

describe('bench scripts’ command lines', () => {
  it.each([
    ['fold-scan', ['--bogus'], "fold-scan: Unknown option '--bogus' (see --help)"],
    ['fold-scan', ['--n', '0'], 'fold-scan: --n takes a positive integer'],
    [
      'run-inspect',
      ['--sizes', '10,x'],
      'contextfold bench:inspect: --sizes takes a comma-separated list of positive integers',
    ],
    [
      'run',
      ['--parts', 'nope'],
      'contextfold bench: --parts: unknown part nope (use sizes, hook, pack, inspect, guard)',
    ],
  ])('%s %j: one line, exit 1, nothing measured', (name, args, line) => {
    const r = run(name, ...args);
    expect([r.status, r.stderr, r.stdout]).toEqual([1, `${line}\n`, '']);
  });

  it.each(['fold-scan', 'run-inspect', 'run'])(
    '%s --help prints its usage and runs nothing',
    (name) => {
      const r = run(name, '--help');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^usage: /);
      expect(r.stderr).toBe('');
    },
  );
});
