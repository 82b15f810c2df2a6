import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What creating one small file costs in a directory, as a fold creates its node's temp file
 * (open with O_CREAT|O_EXCL, one 2 KB write, close; no fsync): the file system's own share of a
 * fold's time. It varies a great deal between directories of the same file system (0.03 to
 * 1.1 ms per file on the development VM), so fold figures are only comparable beside it.
 * Creates `files` files in a new directory under `parent` and removes them.
 *
 * @example
 * fileCreateProbe(tmpdir()); // { files: 512, per_file_ms: 0.041 }
 */
export function fileCreateProbe(
  parent: string,
  files = 512,
): { files: number; per_file_ms: number } {
  const dir = join(parent, `.file-create-probe-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const data = Buffer.alloc(2048, 0x61);
  try {
    const t = performance.now();
    for (let i = 0; i < files; i++) {
      const fd = openSync(join(dir, `.f${i}.tmp`), 'wx', 0o644);
      writeSync(fd, data);
      closeSync(fd);
    }
    return { files, per_file_ms: Number(((performance.now() - t) / files).toFixed(3)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
