import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Absolute path of the built CLI entry point. */
export const CLI = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

/** Result of one CLI run. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

/** Runs the built CLI synchronously with arguments and optional stdin. */
export function runCli(
  args: string[],
  options: { cwd?: string; input?: string | Buffer } = {},
): CliRun {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    input: options.input,
    maxBuffer: 64 * 1024 * 1024,
  });
  return {
    code: r.status ?? -1,
    stdout: r.stdout.toString('utf8'),
    stderr: r.stderr.toString('utf8'),
    stdoutBytes: r.stdout,
  };
}
