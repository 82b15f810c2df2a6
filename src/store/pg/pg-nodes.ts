import { NodeNotLoadedError } from '../index-backend.js';
import { nodeFileName } from '../layout.js';
import type { PgConnections } from './pg-connections.js';

/** Node bodies kept for verification (each is re-hashed on every use). */
const NODE_CACHE = 256;

/**
 * The node bytes a {@link PgStore} process holds: fetched fresh by `load` (never trusted, the
 * store verifies them on use) and kept for a while, oldest dropped first. Verification reads
 * are synchronous, the database is not: this is what bridges them.
 */
export class PgNodes {
  readonly #connections: PgConnections;
  readonly #storeId: string;
  readonly #nodes = new Map<number, Buffer | null>();

  constructor(connections: PgConnections, storeId: string) {
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
      this.#nodes.delete(s);
      this.#nodes.set(s, found.get(s) ?? null);
    }
    while (this.#nodes.size > Math.max(NODE_CACHE, want.length)) {
      this.#nodes.delete(this.#nodes.keys().next().value!);
    }
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
