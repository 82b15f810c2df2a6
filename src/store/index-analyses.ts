// The analyses table: a node's ranked analysis is stored once, by content address, however many
// documents share it, and read back whole when an entry is reindexed or a cache is refilled.
import type { NodeAnalysisRecord, PackedAnalysis } from './analysis-record.js';
import { deflate, deflateToSend, type PackBody, type StoredBody, unpack } from './index-body.js';
import type { IndexStatements } from './index-statements.js';

/** A node's stored analysis, as the backend defines it (see {@link NodeAnalysisRecord}). */
export type StoredAnalysis = NodeAnalysisRecord;

/** The text of an analysis's body column: its terms and their frequencies. */
function analysisBody(a: Pick<StoredAnalysis, 'terms' | 'tfs'>): string {
  return JSON.stringify([a.terms, a.tfs]);
}

/**
 * An analysis's body and features as an index file stores them: a pure function, so a worker
 * deflates them while the committing thread commits the round before.
 */
export function packAnalysis(
  a: Pick<StoredAnalysis, 'terms' | 'tfs' | 'features'>,
): PackedAnalysis {
  return { body: deflateToSend(analysisBody(a)), features: deflateToSend(a.features) };
}

/** Bytes from another thread (a structured clone makes a Buffer a plain Uint8Array). */
const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** The analysis rows of one index connection (its statements, and how it packs bodies). */
export class AnalysisRows {
  readonly #s: IndexStatements;
  readonly #pack: PackBody;

  constructor(s: IndexStatements, pack: PackBody) {
    this.#s = s;
    this.#pack = pack;
  }

  /** Stores analyses by content address (existing ones are kept). */
  putAnalyses(list: readonly StoredAnalysis[]): void {
    for (const a of list) this.putAnalysis(a);
  }

  /** Stores one analysis unless its key is stored; returns its row id. */
  putAnalysis(a: StoredAnalysis): number {
    // Compressed: the keys of the nodes are most of the index's bytes. Deflated ahead where a
    // worker did it and this index deflates (the same bytes).
    const pre = this.#pack === deflate ? a.packed : undefined;
    const body = pre ? asBuffer(pre.body) : this.#pack(analysisBody(a));
    const features = pre ? asBuffer(pre.features) : this.#pack(a.features);
    const r = this.#s
      .get(
        'putAnalysis',
        'INSERT OR IGNORE INTO analyses (akey, length, parts, part_length, features, body) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(a.akey, a.length, a.parts, a.partLength, features, body);
    return r.changes === 1 ? Number(r.lastInsertRowid) : this.analysisId(a.akey)!;
  }

  /** The row id of a stored analysis (undefined: not stored). */
  analysisId(akey: string): number | undefined {
    return this.#s.get('analysisId', 'SELECT id FROM analyses WHERE akey = ?').pluck().get(akey) as
      | number
      | undefined;
  }

  /** Stored analyses by key (missing keys absent). */
  analyses(akeys: readonly string[]): Map<string, StoredAnalysis> {
    const out = new Map<string, StoredAnalysis>();
    const get = this.#s.get(
      'getAnalysis',
      'SELECT length, parts, part_length, features, body FROM analyses WHERE akey = ?',
    );
    for (const akey of akeys) {
      const r = get.get(akey) as
        | {
            length: number;
            parts: number;
            part_length: number;
            features: StoredBody;
            body: StoredBody;
          }
        | undefined;
      if (!r) continue;
      const [terms, tfs] = JSON.parse(unpack(r.body)) as [string[], number[]];
      out.set(akey, {
        akey,
        length: r.length,
        parts: r.parts,
        partLength: r.part_length,
        features: unpack(r.features),
        terms,
        tfs,
      });
    }
    return out;
  }
}
