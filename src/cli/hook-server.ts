import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { HookEngines } from '../adapters/claude-code/run-hook.js';
import { SerialQueue } from '../store/serial-queue.js';
import { WriteLock } from '../store/write-lock.js';
import { type HookIo, type HookRequest, runHookRequest } from './hook-request.js';

/** What the server answers to one request (one JSON line). */
export interface HookReply {
  v: 1;
  stdout: string;
  stderr: string;
  code: number;
}

/** Options of {@link serveHooks}. */
export interface HookServerOptions {
  /** The Unix socket to listen on (see `hookSocketPath`). */
  socketPath: string;
  /** Exit after this long without a request (default 10 minutes). */
  idleMs?: number;
  /** How often the server checks that its socket file is still its own (default 2 s). */
  checkMs?: number;
  /** How long a client may take to send its request, and to read the reply (default 30 s). */
  requestTimeoutMs?: number;
  /** Told of each request before it runs (a log line, a test). */
  onRequest?: (request: HookRequest) => void;
}

/** A running hook server. */
export interface HookServer {
  /** Resolves when the server has stopped (idle, its socket removed, or `close()`). */
  readonly closed: Promise<void>;
  close(): void;
}

/** A client gets this long to send its request line, and again to read the reply. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A request line longer than this is refused (a hook input is a few KB). */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

function isRequest(v: unknown): v is HookRequest {
  const r = v as Partial<HookRequest> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    r.v === 1 &&
    typeof r.event === 'string' &&
    typeof r.stdin === 'string' &&
    typeof r.cwd === 'string' &&
    (r.projectDir === undefined || typeof r.projectDir === 'string') &&
    typeof r.redact === 'boolean' &&
    (r.dir === undefined || typeof r.dir === 'string') &&
    (r.tokenizer === undefined || typeof r.tokenizer === 'string') &&
    (r.retrieval === undefined || typeof r.retrieval === 'string')
  );
}

/** Reads one newline-terminated line from a socket (null: closed first, or too long). */
function readLine(socket: Socket): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (line: string | null) => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onEnd);
      resolve(line);
    };
    const onData = (chunk: Buffer) => {
      const nl = chunk.indexOf(0x0a);
      chunks.push(nl === -1 ? chunk : chunk.subarray(0, nl));
      size += chunk.length;
      if (nl !== -1) done(Buffer.concat(chunks).toString('utf8'));
      else if (size > MAX_REQUEST_BYTES) done(null);
    };
    const onEnd = () => done(null);
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    socket.on('error', onEnd);
  });
}

/** Reads a client's request line (null: closed first, too long, or not a request). */
async function readRequest(socket: Socket): Promise<HookRequest | null> {
  const line = await readLine(socket);
  let request: unknown;
  try {
    request = line === null ? null : JSON.parse(line);
  } catch {
    request = null;
  }
  return isRequest(request) ? request : null;
}

/** Runs one request as the CLI would, keeping what it writes for the reply. */
async function runCaptured(request: HookRequest, engines: HookEngines): Promise<HookReply> {
  const out: string[] = [];
  const err: string[] = [];
  const io: HookIo = { out: (t) => out.push(t), err: (t) => err.push(t) };
  const code = await runHookRequest(request, io, engines);
  return { v: 1, stdout: out.join(''), stderr: err.join(''), code } satisfies HookReply;
}

/** Whether the socket file is still the one this server made (false: removed or replaced). */
function isOurSocket(socketPath: string, ino: bigint | null): boolean {
  try {
    return lstatSync(socketPath, { bigint: true }).ino === ino;
  } catch {
    return false;
  }
}

/** Resolves once the server listens on the socket path, rejects with its error if it cannot. */
function listen(server: Server, socketPath: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Serves `contextfold hook` runs over a Unix socket, one at a time: a process that stays up
 * between Claude Code's prompts answers in the time of the work itself, without a Node start-up,
 * module loading and a cold JIT on every prompt. Each request is exactly the run the CLI would
 * do ({@link runHookRequest}), with the session stores kept open between requests (their
 * indexes and read caches warm; they follow what other processes write, and close when it stops).
 *
 * One server per socket: it holds `<socket>.lock` (an OS lock, released when it dies) for its
 * life, so a second server started at the same moment returns null. It stops after `idleMs`
 * without a request, or as soon as its socket file is removed or replaced.
 *
 * @example
 * const server = await serveHooks({ socketPath: '/tmp/contextfold-1000/hook-ab12.sock' });
 * if (server) await server.closed;
 */
export async function serveHooks(options: HookServerOptions): Promise<HookServer | null> {
  const { socketPath } = options;
  const lock = new WriteLock(`${socketPath}.lock`);
  if (!lock.tryAcquire()) {
    lock.close();
    return null;
  }
  // Under the lock no other server is listening: a socket file left here is a dead one's.
  if (existsSync(socketPath)) unlinkSync(socketPath);
  const queue = new SerialQueue();
  const engines = new HookEngines();
  let stop: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    stop = resolve;
  });
  // The client ends its side after the request; the reply still has to go back on ours.
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    void handle(socket);
  });
  let idle: NodeJS.Timeout | undefined;
  const armIdle = () => {
    clearTimeout(idle);
    idle = setTimeout(close, options.idleMs ?? 10 * 60_000);
  };
  let active = 0;
  let closing = false;
  async function handle(socket: Socket): Promise<void> {
    active++;
    clearTimeout(idle);
    // A client that never sends its line (or never reads the reply) does not keep the server up.
    socket.setTimeout(options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS, () => socket.destroy());
    socket.on('error', () => {});
    try {
      const request = await readRequest(socket);
      if (!request) {
        socket.destroy();
        return;
      }
      options.onRequest?.(request);
      socket.setTimeout(0); // the run itself may take long (a first catch-up): the client waits
      const reply = await queue.run(() => runCaptured(request, engines));
      socket.setTimeout(options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS);
      socket.end(`${JSON.stringify(reply)}\n`);
    } finally {
      if (--active === 0 && !closing) armIdle();
    }
  }
  let ino: bigint | null = null;
  let check: NodeJS.Timeout | undefined;
  function close(): void {
    if (closing) return;
    closing = true;
    clearTimeout(idle);
    clearInterval(check);
    server.close(() => {
      // Ours still (not replaced by a newer server): remove it, then let the next one start.
      try {
        if (isOurSocket(socketPath, ino)) unlinkSync(socketPath);
      } catch {}
      void queue
        .run(() => engines.closeAll())
        .finally(() => {
          lock.close();
          stop();
        });
    });
  }
  await listen(server, socketPath);
  ino = lstatSync(socketPath, { bigint: true }).ino;
  check = setInterval(() => {
    if (!isOurSocket(socketPath, ino)) close();
  }, options.checkMs ?? 2000);
  armIdle();
  return { closed, close };
}
