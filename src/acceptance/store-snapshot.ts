import { ContextFold } from '../engine/context-fold.js';
import { isContextFoldError } from '../protocol/errors.js';
import type { CaseInputDoc } from './case-schema.js';

/** A case could not be set up as written: the integration did not reach its preconditions. */
export class SetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SetupError';
  }
}

/** One node of a session's store, read and verified right after setup. */
export interface StoredNode {
  session: string;
  step_id: number;
  /** The verified payload bytes. */
  payload: Buffer;
  payload_sha256: string;
  /** The case record it holds (its marker occurs in the payload), if any. */
  record: string | null;
}

/** Every session's verified nodes, found records, and lookups by payload hash and step. */
export interface StoreSnapshot {
  nodes: StoredNode[];
  record(session: string, name: string): StoredNode | undefined;
  byHash(payloadSha256: string): StoredNode | undefined;
  byStep(session: string, step: number): StoredNode | undefined;
}

/** Opens a store read-only for the runner (never the integration's own handle). */
export function openForRunner(dir: string): Promise<ContextFold> {
  return ContextFold.open({ dir, tokenizer: 'reference', retrieval: 'reference', cacheDir: false });
}

async function readSession(session: string, dir: string): Promise<StoredNode[]> {
  const cf = await openForRunner(dir);
  try {
    const out: StoredNode[] = [];
    for (const e of await cf.entries()) {
      let payload: Buffer;
      try {
        payload = Buffer.from(await cf.hydrateBytes(e.step_id));
      } catch (err) {
        if (!isContextFoldError(err)) throw err;
        throw new SetupError(
          `session ${session}: step ${e.step_id} fails verification after setup`,
        );
      }
      out.push({
        session,
        step_id: e.step_id,
        payload,
        payload_sha256: e.payload_sha256,
        record: null,
      });
    }
    return out;
  } finally {
    await cf.close({ compact: false });
  }
}

/**
 * Reads every session's store after setup (verified, through the engine) and finds the node of
 * each record by its marker: an archived record must be in exactly one node, any record in at
 * most one. A record the integration did not archive is a {@link SetupError}: the case's
 * precondition does not hold, so nothing it checks afterwards would mean anything.
 *
 * @example
 * const snap = await snapshotStores(input, (s) => subjectCase.storeDir(s));
 * snap.record('main', 'port')?.step_id;
 */
export async function snapshotStores(
  input: CaseInputDoc,
  storeDir: (session: string) => string,
): Promise<StoreSnapshot> {
  const nodes: StoredNode[] = [];
  const records = new Map<string, StoredNode>();
  for (const [session, s] of Object.entries(input.sessions)) {
    const own = await readSession(session, storeDir(session));
    nodes.push(...own);
    for (const t of s.history) {
      if (t.record === undefined || t.marker === undefined) continue;
      const found = own.filter((n) => n.payload.includes(Buffer.from(t.marker!, 'utf8')));
      if (found.length > 1)
        throw new SetupError(`record ${t.record}: its marker is in ${found.length} nodes`);
      if (found.length === 0 && t.archived === true)
        throw new SetupError(`record ${t.record} was not archived by the integration`);
      if (found[0]) {
        found[0].record = t.record;
        records.set(`${session}\u0000${t.record}`, found[0]);
      }
    }
  }
  const hashes = new Map(nodes.map((n) => [n.payload_sha256, n]));
  return {
    nodes,
    record: (session, name) => records.get(`${session}\u0000${name}`),
    byHash: (h) => hashes.get(h),
    byStep: (session, step) => nodes.find((n) => n.session === session && n.step_id === step),
  };
}
