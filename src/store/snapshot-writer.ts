import { createHash } from 'node:crypto';
import { commitTemp, discardTemp, fsyncAsync, openTemp, writeAllAsync } from '../fs/durable-fs.js';
import { canonicalJson } from '../protocol/canonical-json.js';
import { IPCF_VERSION, PROJECTION_VERSION } from '../protocol/types.js';

/** One node of the snapshot: its key (the decimal step id) and its canonical entry JSON. */
export interface SnapshotNode {
  key: string;
  json: string;
}

const FLUSH_AT = 1 << 20;

/**
 * Writes `recall_index.json` exactly as `canonicalJson({created_at, ipcf_version, nodes,
 * projection_version})` would (the reference's field set, compact canonical form), streaming:
 * `pages` must yield the nodes in code-point order of their keys, each page after the event loop
 * had a turn. Temp file, fsync, rename; the caller fsyncs the directory. Returns the SHA-256 of
 * the bytes written.
 *
 * @example
 * const sha = await writeSnapshot(path, { createdAt, pages: index.nodesInKeyOrder() });
 */
export async function writeSnapshot(
  path: string,
  options: { createdAt: string; pages: AsyncIterable<SnapshotNode[]> },
): Promise<string> {
  const temp = openTemp(path);
  const hash = createHash('sha256');
  let pending = '';
  const flush = async () => {
    if (pending.length === 0) return;
    const bytes = Buffer.from(pending, 'utf8');
    pending = '';
    hash.update(bytes);
    await writeAllAsync(temp.fd, bytes);
  };
  try {
    pending += `{"created_at":${canonicalJson(options.createdAt)},"ipcf_version":${canonicalJson(IPCF_VERSION)},"nodes":{`;
    let first = true;
    for await (const page of options.pages) {
      for (const node of page) {
        pending += `${first ? '' : ','}${canonicalJson(node.key)}:${node.json}`;
        first = false;
        if (pending.length >= FLUSH_AT) await flush();
      }
    }
    pending += `},"projection_version":${canonicalJson(PROJECTION_VERSION)}}`;
    await flush();
    // Off the event loop: a large snapshot takes a while to reach the disk.
    await fsyncAsync(temp.fd);
  } catch (e) {
    discardTemp(temp);
    throw e;
  }
  commitTemp(temp, path);
  return hash.digest('hex');
}
