import { BrokenReferenceError, PathContainmentError } from '../../protocol/ipcf-errors.js';
import type { IndexEntry } from '../../protocol/types.js';
import { NodeNotLoadedError } from '../index-backend.js';
import { nodeFileName } from '../layout.js';
import { type VerifiedNode, verifyNodeText } from '../verify.js';
import type { PgConnections } from './pg-connections.js';

/** Node bodies kept for verification (each is re-hashed on every use). */
const NODE_CACHE = 256;
/** Bytes of node bodies kept beyond those of the last load (large nodes are not hoarded). */
const NODE_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * The node bytes a {@link PgStore} process holds: fetched fresh by `load` (never trusted, the
 * store verifies them on use) and kept for a while, oldest dropped first. Verification reads
 * are synchronous, the database is not: this is what bridges them.
 */
export class PgNodes {
  readonly #connections: Pick<PgConnections, 'withClient'>;
  readonly #storeId: string;
  readonly #nodes = new Map<number, Buffer | null>();
  #bytes = 0;
  /** Nothing is kept beyond the last load (a copy reads each node once). */
  keepOnlyLastLoad = false;

  /** `connections`: where reads run (a pool, or one snapshot's connection). */
  constructor(connections: Pick<PgConnections, 'withClient'>, storeId: string) {
    this.#connections = connections;
    this.#storeId = storeId;
  }

  /** Fetches the nodes of `steps` fresh from the database (verified on use, never trusted). */
  async load(steps: readonly number[]): Promise<void> {
    const want = [...new Set(steps)];
    if (want.length === 0) return;
    const rows = await this.#connections.withClient('reading nodes', async (c) => {
      const r = await c.query<{ step: string; body: Buffer }>(
        'SELECT step, body FROM cf_nodes WHERE store_id = $1 AND step = ANY($2::bigint[])',
        [this.#storeId, want],
      );
      return r.rows;
    });
    const found = new Map(rows.map((r) => [Number(r.step), r.body]));
    for (const s of want) {
      this.#drop(s);
      const body = found.get(s) ?? null;
      this.#nodes.set(s, body);
      this.#bytes += body?.length ?? 0;
    }
    // Oldest first, never one of this load's: at most NODE_CACHE nodes, and past
    // NODE_CACHE_BYTES only this load's.
    while (
      this.#nodes.size > want.length &&
      (this.keepOnlyLastLoad || this.#nodes.size > NODE_CACHE || this.#bytes > NODE_CACHE_BYTES)
    ) {
      this.#drop(this.#nodes.keys().next().value!);
    }
  }

  #drop(step: number): void {
    this.#bytes -= this.#nodes.get(step)?.length ?? 0;
    this.#nodes.delete(step);
  }

  /** The stored size in bytes of each step's node among `steps` (absent: no row). */
  async sizes(steps: readonly number[]): Promise<Map<number, number>> {
    const want = [...new Set(steps)];
    if (want.length === 0) return new Map();
    const rows = await this.#connections.withClient('sizing nodes', async (c) => {
      const r = await c.query<{ step: string; size: number }>(
        'SELECT step, octet_length(body) AS size FROM cf_nodes WHERE store_id = $1 AND step = ANY($2::bigint[])',
        [this.#storeId, want],
      );
      return r.rows;
    });
    return new Map(rows.map((r) => [Number(r.step), Number(r.size)]));
  }

  /** The loaded bytes of a step's node (null: not in the database). Throws if not loaded. */
  bytes(step: number): Buffer | null {
    if (!this.#nodes.has(step)) throw new NodeNotLoadedError(step);
    return this.#nodes.get(step)!;
  }

  /** Every node the database holds for the store, by step, with its file name. */
  async list(): Promise<{ steps: Map<number, string>; stray: string[] }> {
    const rows = await this.#connections.withClient('listing nodes', async (c) => {
      const r = await c.query<{ step: string }>(
        'SELECT step FROM cf_nodes WHERE store_id = $1 ORDER BY step',
        [this.#storeId],
      );
      return r.rows;
    });
    const steps = new Map<number, string>();
    for (const r of rows) steps.set(Number(r.step), nodeFileName(Number(r.step)));
    return { steps, stray: [] };
  }
}

/** Where a database store's nodes are, as entries and messages name them. */
export interface NodePaths {
  /** The `file_path` an entry of the step must record. */
  entryFilePath(step: number): string;
  /** The node's place in the database, for messages. */
  nodePath(step: number): string;
}

/**
 * A loaded node verified against its entry: the entry's `file_path` must be the step's, the
 * node must be in the database, and its bytes must match all three hashes.
 */
export function verifyStoredNode(
  entry: IndexEntry,
  nodes: PgNodes,
  paths: NodePaths,
): VerifiedNode {
  const step = entry.step_id;
  const path = paths.nodePath(step);
  if (entry.file_path !== paths.entryFilePath(step)) {
    throw new PathContainmentError(
      `step ${step}: file_path ${JSON.stringify(entry.file_path)} is not the canonical path for the step; expected ${paths.entryFilePath(step)}`,
      { stepId: step, path: String(entry.file_path) },
    );
  }
  const bytes = nodes.bytes(step);
  if (bytes === null) {
    throw new BrokenReferenceError(
      `step ${step}: cold node is missing from the database: ${path}`,
      {
        stepId: step,
        path,
      },
    );
  }
  return verifyNodeText(entry, bytes.toString('utf8'), path);
}
