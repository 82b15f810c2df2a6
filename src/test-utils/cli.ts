import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';
import { main } from '../cli/main.js';

// Two ways to run the CLI in a test: in this process (fast; stdout/stderr captured) or as the
// real built binary in a child process (exit codes, stdin, signals, bytes on the wire).

/** Absolute path of the built CLI entry point. */
export const CLI = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

/** What a CLI run printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A run of the built CLI in a child process: also the exact stdout bytes. */
export interface CliProcessRun extends CliRun {
  stdoutBytes: Buffer;
}

/**
 * Runs the built CLI (`node dist/cli/bin.js`) in a child process, synchronously, with
 * arguments and optional stdin.
 *
 * @example
 * const r = runCliProcess(['--dir', dir, 'status', '--json'], { input: '' });
 */
export function runCliProcess(
  args: string[],
  options: { cwd?: string; input?: string | Buffer; timeoutMs?: number } = {},
): CliProcessRun {
  // With timeoutMs, a run that has not ended by then is killed (code -1): a hang fails fast.
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    input: options.input,
    timeout: options.timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  return {
    code: r.status ?? -1,
    stdout: r.stdout.toString('utf8'),
    stderr: r.stderr.toString('utf8'),
    stdoutBytes: r.stdout,
  };
}

/**
 * Runs the CLI's `main` in this process with stdout/stderr captured.
 *
 * @example
 * const r = await runCliInProcess(['--dir', dir, 'status', '--json']);
 */
export async function runCliInProcess(argv: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    return true;
  });
  const before = process.exitCode;
  process.exitCode = undefined;
  try {
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    process.exitCode = before;
    out.mockRestore();
    err.mockRestore();
  }
}
