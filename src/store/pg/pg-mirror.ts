import type pg from 'pg';
import { canonicalJson } from '../../protocol/canonical-json.js';
import type { IndexEntry } from '../../protocol/types.js';
import { emptyState, type FoldRow, IndexDb, type StoredAnalysis } from '../index-db.js';
import type { ParsedEntry } from '../index-entry.js';
import type { AnalysisKeyOf } from '../index-loader.js';
import type { NodeFlag } from '../node-flag.js';
import { ReadCache } from '../read-cache.js';
import { bootstrap } from './pg-bootstrap.js';
import {
  analysisFromRow,
  type FeedRow,
  feedPage,
  type Mirror,
  parseEntryRow,
  refuseEntryRow,
} from './pg-feed.js';

/** A mirror that starts behind by more changes than this is filled from the tables instead. */
const BOOTSTRAP_MIN = 2000;

/**
 * A process's mirror of a PostgreSQL store and how it follows the change feed: the in-memory
 * index {@link PgStore} answers reads from, the read cache that belongs to one version of it,
 * and what the last look at the database said. Its own class because following the feed is
 * the one part of the store that changes the mirror wholesale (a reset, a bootstrap).
 */
export class PgMirror {
  readonly #storeId: string;
  /** The store's URL without password, for the rows problems name. */
  readonly #location: string;
  readonly #analyzer: { version: string; keyOf: AnalysisKeyOf } | undefined;
  #mirror: Mirror;
  /** Lists and counts read from the mirror, valid while the mirror does not change. */
  readonly #cache = new ReadCache();
  /** Bumped by every change of the mirror: the cache belongs to one version. */
  #version = 0;
  /** The database held the store at the last look (a follow, or a committed write). */
  exists = false;
  /** Read-only after a damaged analysis: the mirror ignores stored analyses (recomputed). */
  ignoreAnalyses = false;

  constructor(
    storeId: string,
    location: string,
    analyzer: { version: string; keyOf: AnalysisKeyOf } | undefined,
  ) {
    this.#storeId = storeId;
    this.#location = location;
    this.#analyzer = analyzer;
    this.#mirror = this.#emptyMirror(0);
  }

  /** The mirror now (a reset replaces it: hold it only while nothing else can run). */
  get current(): Mirror {
    return this.#mirror;
  }

  /** Marks the mirror changed: what the cache holds is stale. */
  changed(): void {
    this.#version++;
  }

  #emptyMirror(epoch: number): Mirror {
    return {
      db: new IndexDb(':memory:', { create: true, compress: false }),
      state: emptyState(this.#analyzer?.version ?? null),
      seq: 0,
      epoch,
    };
  }

  /** Drops the mirror for an empty one at `epoch` (it is read again from the feed). */
  reset(epoch: number): void {
    this.#version++;
    try {
      this.#mirror.db.close();
    } catch {}
    this.#mirror = this.#emptyMirror(epoch);
  }

  /** The cache, emptied if the mirror changed since it was filled. */
  cached(): ReadCache {
    const v = String(this.#version);
    if (this.#cache.generation !== v) this.#cache.reset(v, 0);
    return this.#cache;
  }

  /** Catches the mirror up on `c` (inside a write transaction: under the store's lock). */
  async follow(c: pg.ClientBase, inWrite = false): Promise<void> {
    if (this.#mirror.seq === 0 && !inWrite) {
      // A first look at a store of any size: read it as one snapshot, by key ranges.
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      try {
        await this.#followIn(c, true);
      } finally {
        await c.query('COMMIT').catch(() => {});
      }
      return;
    }
    await this.#followIn(c, inWrite);
  }

  /** {@link follow} inside a transaction (a snapshot, or a write holding the store's lock). */
  async #followIn(c: pg.ClientBase, consistent: boolean): Promise<void> {
    const r = await c.query<{ seq: string; epoch: number }>(
      'SELECT seq, epoch FROM cf_stores WHERE store_id = $1',
      [this.#storeId],
    );
    const row = r.rows[0];
    if (!row) {
      this.exists = false;
      if (this.#mirror.seq !== 0) this.reset(0);
      return;
    }
    this.exists = true;
    const seq = Number(row.seq);
    if (row.epoch !== this.#mirror.epoch || seq < this.#mirror.seq) this.reset(row.epoch);
    if (this.#mirror.seq === 0 && seq > BOOTSTRAP_MIN && consistent) {
      this.#version++;
      await bootstrap(c, this.#mirror, seq, {
        storeId: this.#storeId,
        location: this.#location,
        keyOf: this.#analyzer?.keyOf,
        ignoreAnalyses: this.ignoreAnalyses,
      });
      return;
    }
    while (this.#mirror.seq < seq) {
      const feed = {
        rows: await feedPage(c, this.#storeId, this.#mirror.seq, !this.ignoreAnalyses),
      };
      if (feed.rows.length === 0) {
        // The rest of the feed was removed with dropped entries (seq was read first, and a
        // commit writes its feed rows and seq together): nothing is missing up to `seq`.
        this.#mirror.seq = Math.max(this.#mirror.seq, seq);
        break;
      }
      const entries = feed.rows.map((r) => this.#entryOf(r));
      // Token counts of the folded payloads (stored beside the feed, not in it): without them
      // a scan would read and count every candidate's payload.
      const folded = feed.rows.flatMap((r, i) => {
        const e = entries[i]!;
        return r.op === 1 && e.ok ? [e.entry] : [];
      });
      const payloads = [...new Set(folded.map((e) => e.payload_sha256))];
      const tokens =
        payloads.length === 0
          ? []
          : (
              await c.query<{ payload_sha256: string; tokenizer: string; count: number }>(
                'SELECT payload_sha256, tokenizer, count FROM cf_tokens WHERE store_id = $1 AND payload_sha256 = ANY($2::text[])',
                [this.#storeId, payloads],
              )
            ).rows;
      const artifacts = folded.map((e) => e.artifact_sha256);
      const flags =
        artifacts.length === 0
          ? []
          : (
              await c.query<NodeFlag>(
                'SELECT artifact_sha256, sanitized FROM cf_flags WHERE store_id = $1 AND artifact_sha256 = ANY($2::text[])',
                [this.#storeId, artifacts],
              )
            ).rows;
      this.#apply(feed.rows, entries);
      this.#mirror.db.putTokens(tokens);
      this.#mirror.db.putFlags(flags);
    }
  }

  /**
   * A feed row's entry, checked as a `recall_index.json` record is. A missing or malformed
   * entry row is the mirror's load problem (the first one found): operations refuse the store
   * and `validate` names the row, as a malformed record of a local store's index.
   */
  #entryOf(r: FeedRow): ParsedEntry {
    const step = Number(r.step);
    const parsed: ParsedEntry =
      r.body === null
        ? { ok: false, reason: `is missing (feed change ${r.seq} names it)` }
        : parseEntryRow(step, r.body);
    if (!parsed.ok) refuseEntryRow(this.#mirror, this.#location, step, parsed.reason);
    return parsed;
  }

  /** The analysis a feed row carries, if it is the current analyzer's for the entry. */
  #analysisOf(entry: IndexEntry, r: FeedRow): StoredAnalysis | undefined {
    const keyOf = this.#analyzer?.keyOf;
    if (this.ignoreAnalyses || !keyOf || r.akey === null || r.abody === null) return undefined;
    if (r.akey !== keyOf(entry)) return undefined;
    return analysisFromRow({
      akey: r.akey,
      length: r.length!,
      parts: r.parts!,
      part_length: r.part_length!,
      features: r.features!,
      body: r.abody,
    });
  }

  /** Applies feed rows with their checked entries, in order, to the mirror. */
  #apply(rows: readonly FeedRow[], entries: readonly ParsedEntry[]): void {
    const m = this.#mirror;
    this.#version++;
    m.db.transaction(() => {
      let folds: FoldRow[] = [];
      const flush = () => {
        if (folds.length === 0) return;
        m.db.insertFolds(folds, m.state);
        folds = [];
      };
      rows.forEach((r, i) => {
        const step = Number(r.step);
        const parsed = entries[i]!;
        if (parsed.ok) {
          const entry = parsed.entry;
          if (r.op === 1) {
            if (m.db.entryJson(step) === undefined)
              folds.push({ entry, json: parsed.json, analysis: this.#analysisOf(entry, r) });
          } else if (r.op === 2) {
            flush();
            const current = m.db.entryJson(step);
            const was = current !== undefined && (JSON.parse(current) as IndexEntry).evicted;
            const json = canonicalJson({ ...entry, evicted: true });
            m.db.evict(step, json, r.evicted_at ?? '', was, m.state);
          } else if (r.op === 3) {
            flush();
            const a = this.#analysisOf(entry, r);
            if (a) {
              m.db.attachAnalyses(
                [
                  {
                    step,
                    payload_sha256: entry.payload_sha256,
                    summary: entry.summary,
                    analysis: a,
                  },
                ],
                m.state,
              );
            }
          }
        }
        m.seq = Number(r.seq);
      });
      flush();
    });
  }
}
