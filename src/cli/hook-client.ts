import { spawn } from 'node:child_process';
import { lstatSync, unlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { packagePath } from '../fs/package-root.js';
import type { HookRequest } from './hook-request.js';
import type { HookReply } from './hook-server.js';
import { hookSocketPath } from './hook-socket.js';
import { readStdinText } from './read-stdin.js';

const GLOBAL_VALUE_OPTIONS = ['--dir', '--tokenizer', '--retrieval'] as const;

/**
 * How long a run waits for the server's reply before it runs here instead: well under the
 * timeouts `install` gives Claude Code (15 s, PreCompact 60 s), so a server that stopped
 * answering (stopped, swapped out, a run that never ends) leaves the run time to happen here.
 */
const REPLY_TIMEOUT_MS: Record<string, number> = { 'pre-compact': 30_000 };
const DEFAULT_REPLY_TIMEOUT_MS = 10_000;

/**
 * The request of a plain hook command line (`[--dir D] [--tokenizer T] [--retrieval R] hook
 * EVENT [--no-redact]`, what `contextfold install claude-code` writes), without stdin; null for
 * anything else, which the full CLI parses (help, other options, errors).
 */
export function plainHookArgs(
  argv: readonly string[],
): Omit<HookRequest, 'stdin' | 'cwd' | 'projectDir'> | null {
  const values: Record<string, string> = {};
  let i = 0;
  for (; i < argv.length && argv[i] !== 'hook'; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const name = eq === -1 ? a : a.slice(0, eq);
    if (!(GLOBAL_VALUE_OPTIONS as readonly string[]).includes(name) || name in values) return null;
    const value = eq === -1 ? argv[++i] : a.slice(eq + 1);
    if (value === undefined || value.startsWith('-')) return null;
    values[name] = value;
  }
  const event = argv[i + 1];
  if (argv[i] !== 'hook' || event === undefined || event.startsWith('-')) return null;
  const rest = argv.slice(i + 2);
  if (rest.length > 1 || (rest.length === 1 && rest[0] !== '--no-redact')) return null;
  return {
    v: 1,
    event,
    ...(values['--dir'] !== undefined ? { dir: values['--dir'] } : {}),
    ...(values['--tokenizer'] !== undefined ? { tokenizer: values['--tokenizer'] } : {}),
    ...(values['--retrieval'] !== undefined ? { retrieval: values['--retrieval'] } : {}),
    redact: rest.length === 0,
  };
}

function connectTo(path: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => resolve(socket));
    socket.once('error', () => resolve(null));
  });
}

/**
 * Sends one request; null when the server went away before a whole reply, or `'timeout'` when
 * it did not reply within `timeoutMs`.
 */
function exchange(
  socket: Socket,
  request: HookRequest,
  timeoutMs: number,
): Promise<HookReply | null | 'timeout'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      resolve('timeout');
      socket.destroy();
    }, timeoutMs);
    socket.once('close', () => clearTimeout(timer));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.once('error', () => resolve(null));
    socket.once('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        const reply = JSON.parse(text) as HookReply;
        const ok =
          text.endsWith('\n') &&
          reply.v === 1 &&
          typeof reply.stdout === 'string' &&
          typeof reply.stderr === 'string' &&
          Number.isInteger(reply.code);
        resolve(ok ? reply : null);
      } catch {
        resolve(null);
      }
    });
    socket.end(`${JSON.stringify(request)}\n`);
  });
}

/** The inode of the socket file, or null when it is gone. */
function socketInode(path: string): bigint | null {
  try {
    return lstatSync(path, { bigint: true }).ino;
  } catch {
    return null;
  }
}

/**
 * Retires a server that did not answer: removing its socket file (still the one this run
 * connected to) stops it as soon as it runs again, and the next prompt starts a new one.
 */
function retireServer(path: string, ino: bigint | null): void {
  try {
    if (ino !== null && socketInode(path) === ino) unlinkSync(path);
  } catch {}
}

/** Starts a server in the background for the next prompts; this one runs here. */
function startServer(socketPath: string): void {
  const main = packagePath('dist', 'cli', 'hook-server-main.js');
  try {
    spawn(process.execPath, [main, socketPath], { detached: true, stdio: 'ignore' }).unref();
  } catch {
    // No server then: every prompt runs in its own process, as without one.
  }
}

/**
 * Runs a plain `contextfold hook EVENT` through the hook server when one is up, and starts one
 * when none is (this run then happens here). Returns the exit code, or null when the full CLI
 * should run it instead: not a plain hook command line, `CONTEXTFOLD_HOOK_SERVER=0`, no server
 * yet. When the server goes away mid-run, or does not reply in time (it is then retired), the
 * run happens here with the same input (a hook run is idempotent: what was folded stays folded,
 * the rest is folded now).
 *
 * @example
 * const code = (await hookViaServer(process.argv.slice(2))) ?? (await main(process.argv.slice(2)));
 */
export async function hookViaServer(argv: readonly string[]): Promise<number | null> {
  if (process.env.CONTEXTFOLD_HOOK_SERVER === '0' || process.stdin.isTTY) return null;
  const args = plainHookArgs(argv);
  if (!args) return null;
  const socketPath = hookSocketPath(process.env);
  if (!socketPath) return null;
  const ino = socketInode(socketPath);
  const socket = await connectTo(socketPath);
  if (!socket) {
    startServer(socketPath);
    return null;
  }
  const request: HookRequest = {
    ...args,
    stdin: await readStdinText(),
    cwd: process.cwd(),
    // As projectDirOf (hook-request.ts), which this process does not load.
    ...(process.env.CLAUDE_PROJECT_DIR ? { projectDir: process.env.CLAUDE_PROJECT_DIR } : {}),
  };
  const timeoutMs = REPLY_TIMEOUT_MS[args.event] ?? DEFAULT_REPLY_TIMEOUT_MS;
  const reply = await exchange(socket, request, timeoutMs);
  const warnings: string[] = [];
  if (reply === 'timeout') {
    retireServer(socketPath, ino);
    warnings.push(
      `contextfold: the hook server did not answer within ${timeoutMs / 1000} s; this run happens in its own process, and the next prompt starts a new server`,
    );
    process.stderr.write(`${warnings[0]}\n`);
  }
  if (reply === null || reply === 'timeout') {
    // The warning is also the systemMessage of this run's output: Claude Code shows the user
    // that, not the stderr of a hook that exits 0.
    const { processIo, runHookRequest } = await import('./hook-request.js');
    return runHookRequest(request, processIo, undefined, warnings);
  }
  process.stdout.write(reply.stdout);
  process.stderr.write(reply.stderr);
  return reply.code;
}
