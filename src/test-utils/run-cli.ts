import { vi } from 'vitest';
import { main } from '../cli/main.js';

/** What an in-process CLI run printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in this process with stdout/stderr captured (and stdin from `input`, if given).
 *
 * @example
 * const r = await runCli(['--dir', dir, 'status', '--json']);
 */
export async function runCli(argv: string[]): Promise<CliRun> {
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
