// Standard input read whole, synchronously, whatever kind of file descriptor the parent handed.
import { readSync } from 'node:fs';

const CHUNK = 1 << 20;

/**
 * All of standard input. Unlike `readFileSync(0)`, waits when fd 0 is a non-blocking pipe that
 * holds nothing yet (EAGAIN): a parent that writes slower than this process reads (Claude Code
 * writing a hook input of a few MB through a 64 KB pipe) gets the whole input read, not an
 * error at the first empty pipe. Callers test for a terminal with `isatty(0)`, not
 * `process.stdin.isTTY`: the latter opens fd 0 as a stream, which makes a pipe non-blocking.
 *
 * @example
 * const input = readStdin().toString('utf8');
 */
export function readStdin(): Buffer {
  const chunks: Buffer[] = [];
  const buf = Buffer.allocUnsafe(CHUNK);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, CHUNK, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 2);
        continue;
      }
      // Windows reports the end of a pipe as EOF.
      if (code === 'EOF') break;
      throw e;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks);
}
