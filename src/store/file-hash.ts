import { createHash } from 'node:crypto';
import { open as openFile } from 'node:fs/promises';

/**
 * The SHA-256 of a file, read in 1 MiB pieces off the event loop (null: it cannot be opened).
 * The index records the snapshot's hash: file identity alone cannot rule out a same-size
 * rewrite within one clock tick.
 */
export async function hashFile(path: string): Promise<string | null> {
  const hash = createHash('sha256');
  let fh: Awaited<ReturnType<typeof openFile>>;
  try {
    fh = await openFile(path, 'r');
  } catch {
    return null;
  }
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return hash.digest('hex');
}
