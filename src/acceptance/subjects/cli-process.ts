import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { packagePath } from '../../fs/package-root.js';

/** The `contextfold` executable of this package (the built CLI, as a user runs it). */
export const BIN_PATH = packagePath('dist', 'cli', 'bin.js');

/** Options of the subjects that run the CLI as a separate process. */
export interface ProcessSubjectOptions {
  /** Extra environment for every process (e.g. `NODE_OPTIONS` for an instrumented run). */
  env?: Record<string, string>;
}

/**
 * The environment of a spawned CLI: the caller's, the case's own analysis cache and temp dir (so
 * nothing is written outside the case's directory), and the subject's extra variables. The
 * Claude Code hook's server keeps its socket in the temp dir, so it stops when the case's
 * directory is removed; under the caller's TMPDIR every case left one running for its 10 idle
 * minutes (some 60 MB each, 38 per run of the suite).
 */
export function childEnv(
  workDir: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') env[k] = v;
  const tmp = join(workDir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  return { ...env, CONTEXTFOLD_CACHE_DIR: join(workDir, 'cache'), TMPDIR: tmp, ...extra };
}

/** What a finished process printed and how it ended. */
export interface ProcessResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node dist/cli/bin.js …args` with `stdin` as its input and waits for it to end
 * (asynchronously: other subjects keep running meanwhile).
 */
export function runCli(
  args: string[],
  stdin: string,
  env: Record<string, string>,
  cwd: string,
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN_PATH, ...args], {
      env,
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (status) =>
      resolve({
        status,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
    child.stdin.end(stdin);
  });
}
