import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import type { Subject, SubjectRequest, SubjectResponse } from './types.js';

/** The subject broke the protocol: died, timed out, or wrote something that is not a response. */
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
 * A subject in another process, spoken to over JSON lines on its stdin/stdout (PROTOCOL.md §1).
 * stderr is passed through for the subject's own logs. If the process dies, the pending request
 * fails with {@link SubjectProtocolError} and the next request starts a fresh process.
 *
 * @example
 * const subject = spawnSubject({ command: 'python3 my_subject.py' });
 */
export function spawnSubject(options: SpawnSubjectOptions): Subject {
  const timeoutMs = options.timeoutMs ?? 60_000;
  let child: ChildProcess | null = null;
  let lines: Interface | null = null;
  let pending: Pending | null = null;
  let stderrTail = '';

  let hello: SubjectRequest | null = null;

  const fail = (e: Error) => {
    const p = pending;
    pending = null;
    if (p) {
      clearTimeout(p.timer);
      p.reject(e);
    }
  };

  /** A protocol violation: the process is not trusted again; the next request starts a new one. */
  const violation = (e: Error) => {
    const c = child;
    child = null;
    lines = null;
    fail(e);
    c?.kill('SIGKILL');
  };

  const start = (): ChildProcess => {
    const c = spawn(options.command, {
      cwd: options.cwd,
      shell: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    stderrTail = '';
    c.stderr?.on('data', (d: Buffer) => {
      stderrTail = (stderrTail + d.toString('utf8')).slice(-2000);
    });
    // Only the current process can fail the pending request: a replaced one dies quietly.
    c.on('error', (e) => {
      if (child === c) violation(new SubjectProtocolError(`subject could not start: ${e.message}`));
    });
    c.on('exit', (code, signal) => {
      if (child !== c) return;
      child = null;
      lines = null;
      const last = stderrTail.trim().split('\n').pop() ?? '';
      fail(
        new SubjectProtocolError(
          `subject exited (${signal ?? `code ${code}`})${last ? `: ${last}` : ''}`,
        ),
      );
    });
    c.stdin?.on('error', () => {});
    const rl = createInterface({ input: c.stdout!, crlfDelay: Number.POSITIVE_INFINITY });
    rl.on('line', (line) => {
      if (line.trim() === '') return;
      const p = pending;
      if (!p) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        violation(
          new SubjectProtocolError(`subject wrote a line that is not JSON: ${line.slice(0, 120)}`),
        );
        return;
      }
      if (!isResponse(parsed)) {
        violation(
          new SubjectProtocolError(
            `subject wrote something that is not a response: ${line.slice(0, 120)}`,
          ),
        );
        return;
      }
      if (parsed.id !== p.id) {
        violation(
          new SubjectProtocolError(`subject answered id ${String(parsed.id)} to request ${p.id}`),
        );
        return;
      }
      pending = null;
      clearTimeout(p.timer);
      p.resolve(parsed);
    });
    child = c;
    lines = rl;
    return c;
  };

  const send = (req: SubjectRequest): Promise<SubjectResponse> => {
    const c = child;
    if (!c) return Promise.reject(new SubjectProtocolError('subject is not running'));
    return new Promise<SubjectResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        violation(
          new SubjectProtocolError(`subject did not answer ${req.op} within ${timeoutMs} ms`),
        );
      }, timeoutMs);
      pending = { id: req.id, resolve, reject, timer };
      c.stdin!.write(`${JSON.stringify(req)}\n`);
    });
  };

  return {
    async request(req: SubjectRequest): Promise<SubjectResponse> {
      if (pending) throw new SubjectProtocolError('one request at a time');
      if (req.op === 'hello') hello = req;
      if (!child) {
        start();
        // A fresh process after a violation hears the same hello first (PROTOCOL.md §1).
        if (hello && req.op !== 'hello') await send(hello);
      }
      return send(req);
    },
    async close(): Promise<void> {
      const c = child;
      if (!c) return;
      lines?.close();
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          c.kill('SIGKILL');
          resolve();
        }, 5_000);
        c.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        c.stdin!.end();
      });
      child = null;
    },
  };
}
