import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Subject, SubjectRequest } from './types.js';

/**
 * Serves a subject over JSON lines (PROTOCOL.md §1): one request per input line, one response
 * per output line, in order. A line that is not a request gets a `UsageError` response with
 * `id: null`. Resolves when the input ends or after a `shutdown` request.
 *
 * @example
 * await serveSubject(new LibrarySubject(), process.stdin, process.stdout);
 */
export async function serveSubject(
  subject: Subject,
  input: Readable,
  output: Writable,
): Promise<void> {
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const write = (obj: unknown) =>
    new Promise<void>((resolve, reject) => {
      output.write(`${JSON.stringify(obj)}\n`, (e) => (e ? reject(e) : resolve()));
    });
  try {
    for await (const line of lines) {
      if (line.trim() === '') continue;
      let req: SubjectRequest;
      try {
        req = JSON.parse(line) as SubjectRequest;
        if (
          typeof req !== 'object' ||
          req === null ||
          typeof req.op !== 'string' ||
          !Number.isSafeInteger(req.id)
        ) {
          throw new Error('not a request');
        }
      } catch {
        await write({
          id: null,
          ok: false,
          error: {
            name: 'UsageError',
            message: 'each line must be a JSON request {"id": <int>, "op": <string>, ...}',
          },
        });
        continue;
      }
      if (req.op === 'shutdown') {
        await write({ id: req.id, ok: true, result: {} });
        break;
      }
      await write(await subject.request(req));
    }
  } finally {
    lines.close();
    await subject.close();
  }
}
