import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import type { Subject, SubjectRequest, SubjectResponse } from './types.js';

/**
 * The subject broke the protocol: died, timed out, or wrote something that is not a response.
 *
 * @example
 * const subject = spawnSubject({ command: 'python3 my_subject.py' });
 * await subject.request({ id: 1, op: 'hello' }).catch((e: Error) => e.name); // 'SubjectProtocolError' if it died
 */
export class SubjectProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SubjectProtocolError';
  }
}

/** Options of {@link spawnSubject}. */
export interface SpawnSubjectOptions {
  /** Shell command that starts the subject, e.g. `node dist/cli/bin.js subject`. */
  command: string;
  /** Working directory of the subject process. */
  cwd?: string;
  /** How long one request may take. Default 60 s. */
  timeoutMs?: number;
}

interface Pending {
  id: number;
  resolve: (r: SubjectResponse) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

function isResponse(v: unknown): v is SubjectResponse {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  if (r.ok === true)
    return typeof r.result === 'object' && r.result !== null && !Array.isArray(r.result);
  if (r.ok === false) {
    const e = r.error as Record<string, unknown> | undefined;
    return typeof e === 'object' && e !== null && typeof e.name === 'string';
  }
  return false;
}

/**
 * A response line checked against the request it answers: the response, or the protocol
 * violation it is (not JSON, not a response, another id).
 */
function parseResponse(line: string, id: number): SubjectResponse | SubjectProtocolError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return new SubjectProtocolError(`subject wrote a line that is not JSON: ${line.slice(0, 120)}`);
  }
  if (!isResponse(parsed)) {
    return new SubjectProtocolError(
      `subject wrote something that is not a response: ${line.slice(0, 120)}`,
    );
  }
  if (parsed.id !== id) {
    return new SubjectProtocolError(`subject answered id ${String(parsed.id)} to request ${id}`);
  }
  return parsed;
}

/**
 * Ends a subject for good: its whole process group (the shell `spawn` ran and the subject it
 * started, which outlives a killed shell and keeps its stdout open), and our ends of its pipes,
 * which a process outside the group could still hold open (the runner would never exit).
 */
function killTree(c: ChildProcess): void {
  try {
    if (process.platform !== 'win32' && c.pid !== undefined) process.kill(-c.pid, 'SIGKILL');
    else c.kill('SIGKILL');
  } catch {
    c.kill('SIGKILL'); // the group is gone already (ESRCH)
  }
  c.stdin?.destroy();
  c.stdout?.destroy();
  c.stderr?.destroy();
}

/**
 * A subject in another process, spoken to over JSON lines on its stdin/stdout (PROTOCOL.md §1).
 * stderr is passed through for the subject's own logs. If the process dies, the pending request
 * fails with {@link SubjectProtocolError} and the next request starts a fresh process.
 *
 * @example
 * const subject = spawnSubject({ command: 'python3 my_subject.py' });
 */
export function spawnSubject(options: SpawnSubjectOptions): Subject {
  return new ProcessSubject(options);
}

class ProcessSubject implements Subject {
  readonly #command: string;
  readonly #cwd: string | undefined;
  readonly #timeoutMs: number;
  #child: ChildProcess | null = null;
  #lines: Interface | null = null;
  #pending: Pending | null = null;
  #stderrTail = '';
  #hello: SubjectRequest | null = null;
  /** A violation seen while no request was pending (a line nobody asked for): the next one's. */
  #stray: SubjectProtocolError | null = null;

  constructor(options: SpawnSubjectOptions) {
    this.#command = options.command;
    this.#cwd = options.cwd;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
  }

  async request(req: SubjectRequest): Promise<SubjectResponse> {
    if (this.#pending) throw new SubjectProtocolError('one request at a time');
    if (req.op === 'hello') this.#hello = req;
    const stray = this.#stray;
    if (stray) {
      this.#stray = null;
      throw stray;
    }
    if (!this.#child) {
      this.#start();
      // A fresh process after a violation hears the same hello first (PROTOCOL.md §1).
      if (this.#hello && req.op !== 'hello') await this.#send(this.#hello);
    }
    return this.#send(req);
  }

  async close(): Promise<void> {
    const c = this.#child;
    if (!c) return;
    this.#lines?.close();
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        killTree(c);
        resolve();
      }, 5_000);
      c.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      c.stdin!.end();
    });
    this.#child = null;
  }

  #fail(e: Error): void {
    const p = this.#pending;
    this.#pending = null;
    if (p) {
      clearTimeout(p.timer);
      p.reject(e);
    }
  }

  /** A protocol violation: the process is not trusted again; the next request starts a new one. */
  #violation(e: Error): void {
    const c = this.#child;
    this.#child = null;
    this.#lines = null;
    this.#fail(e);
    if (c) killTree(c);
  }

  #start(): void {
    const c = spawn(this.#command, {
      cwd: this.#cwd,
      shell: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so that ending it ends what the shell started too.
      detached: process.platform !== 'win32',
    });
    this.#stderrTail = '';
    c.stderr?.on('data', (d: Buffer) => {
      this.#stderrTail = (this.#stderrTail + d.toString('utf8')).slice(-2000);
    });
    // Only the current process can fail the pending request: a replaced one dies quietly.
    c.on('error', (e) => {
      if (this.#child === c) {
        this.#violation(new SubjectProtocolError(`subject could not start: ${e.message}`));
      }
    });
    c.on('exit', (code, signal) => {
      if (this.#child !== c) return;
      this.#child = null;
      this.#lines = null;
      const last = this.#stderrTail.trim().split('\n').pop() ?? '';
      this.#fail(
        new SubjectProtocolError(
          `subject exited (${signal ?? `code ${code}`})${last ? `: ${last}` : ''}`,
        ),
      );
    });
    c.stdin?.on('error', () => {});
    const rl = createInterface({ input: c.stdout!, crlfDelay: Number.POSITIVE_INFINITY });
    rl.on('line', (line) => {
      if (this.#child === c) this.#onLine(line);
    });
    this.#child = c;
    this.#lines = rl;
  }

  #onLine(line: string): void {
    const p = this.#pending;
    if (line.trim() === '') return;
    if (!p) {
      // A second response, or output between requests: as much a violation as a wrong id,
      // whether it lands before the next request is written or after.
      this.#stray = new SubjectProtocolError(
        `subject wrote a line no request asked for: ${line.slice(0, 120)}`,
      );
      this.#violation(this.#stray);
      return;
    }
    const r = parseResponse(line, p.id);
    if (r instanceof SubjectProtocolError) {
      this.#violation(r);
      return;
    }
    this.#pending = null;
    clearTimeout(p.timer);
    p.resolve(r);
  }

  #send(req: SubjectRequest): Promise<SubjectResponse> {
    const c = this.#child;
    if (!c) return Promise.reject(new SubjectProtocolError('subject is not running'));
    return new Promise<SubjectResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#violation(
          new SubjectProtocolError(`subject did not answer ${req.op} within ${this.#timeoutMs} ms`),
        );
      }, this.#timeoutMs);
      this.#pending = { id: req.id, resolve, reject, timer };
      c.stdin!.write(`${JSON.stringify(req)}\n`);
    });
  }
}
