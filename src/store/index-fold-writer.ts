// The writes of a fold batch: entry rows, the documents of analysed entries, and the batch's
// terms and postings (one block row per term, many rows per statement), with the change-feed
// rows other processes' caches follow. The hot path of a fold: statements prepared once.
import { foldToken } from '../extract/fold-token.js';
import type { IndexEntry } from '../protocol/types.js';
import { BatchPostings } from './batch-postings.js';
import type { AnalysisRows, StoredAnalysis } from './index-analyses.js';
import type { PackBody } from './index-body.js';
import { FIELD_RANKED, FIELD_REFERENCE } from './index-schema.js';
import type { IndexState } from './index-state.js';
import type { IndexStatements } from './index-statements.js';
import { encodePostings } from './posting-block.js';

/** One fold to apply: the entry, its canonical JSON, and its analysis when known. */
export interface FoldRow {
  entry: IndexEntry;
  json: string;
  analysis?: StoredAnalysis;
}

/** The terms RGSC and recall match for an entry: identifiers ∪ folded files ∪ folded errors. */
export function referenceTerms(entry: IndexEntry): string[] {
  const out = new Set<string>(entry.identifiers);
  for (const f of entry.files) out.add(foldToken(f));
  for (const e of entry.errors) out.add(foldToken(e));
  return [...out];
}

/** Posting blocks inserted per statement. */
const POST_ROWS = 128;
/** One posting block row: the tail of a batch here, and a block rewritten by a drop. */
export const POST_ONE = 'INSERT INTO postings (term, last, first, n, data) VALUES (?, ?, ?, ?, ?)';

/** Postings of a batch, by field ({@link FIELD_REFERENCE}, {@link FIELD_RANKED}). */
type Groups = [BatchPostings, BatchPostings];

const newGroups = (): Groups => [new BatchPostings(), new BatchPostings()];

/** An analysis for a pending entry: applied only while the entry has this payload and summary. */
export interface PendingAnalysis {
  step: number;
  payload_sha256: string;
  summary: string;
  analysis: StoredAnalysis;
}

/**
 * The batch writer of one index connection. Call inside a write transaction; the counters of
 * what it writes go into the `state` it is given.
 */
export class FoldWriter {
  readonly #s: IndexStatements;
  readonly #pack: PackBody;
  readonly #analyses: AnalysisRows;

  constructor(s: IndexStatements, pack: PackBody, analyses: AnalysisRows) {
    this.#s = s;
    this.#pack = pack;
    this.#analyses = analyses;
  }

  /**
   * Inserts entries with their reference postings, and their ranked statistics and postings
   * when the analysis is given; counts them into `state`. Steps must not be indexed yet.
   */
  insertFolds(rows: readonly FoldRow[], state: IndexState): void {
    const groups = newGroups();
    const ins = this.#s.get(
      'insertEntry',
      'INSERT INTO entries (step, analysed, evicted, token_estimate, payload_sha256, artifact_sha256, summary, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    for (const r of rows) {
      const e = r.entry;
      ins.run(
        e.step_id,
        r.analysis ? 1 : 0,
        e.evicted ? 1 : 0,
        e.token_estimate,
        e.payload_sha256,
        e.artifact_sha256,
        e.summary,
        this.#pack(r.json),
      );
      for (const t of referenceTerms(e)) groups[FIELD_REFERENCE].add(t, e.step_id, 1);
      if (r.analysis) this.#doc(e.step_id, r.analysis, groups, state);
      state.entries++;
      if (e.evicted) state.evicted++;
      state.tokenEstimate += e.token_estimate;
      this.change(e.step_id, 1);
    }
    this.#post(groups, state);
  }

  /**
   * Applies analyses to pending entries (those still without one and with the same payload and
   * summary: an entry replaced meanwhile is left alone). Returns how many were applied.
   */
  attachAnalyses(list: readonly PendingAnalysis[], state: IndexState): number {
    this.#analyses.putAnalyses(list.map((x) => x.analysis));
    const upd = this.#s.get(
      'attach',
      'UPDATE entries SET analysed = 1 WHERE step = ? AND analysed = 0 AND payload_sha256 = ? AND summary = ?',
    );
    const groups = newGroups();
    let applied = 0;
    for (const x of list) {
      if (upd.run(x.step, x.payload_sha256, x.summary).changes === 0) continue;
      applied++;
      this.#doc(x.step, x.analysis, groups, state);
      this.change(x.step, 3);
    }
    this.#post(groups, state);
    return applied;
  }

  #termId(field: number, term: string, addDf: number, state: IndexState): number {
    // One statement per term of a batch: a known term gets its frequency added and keeps its
    // id; a new one takes the next id.
    const id = this.#s
      .get(
        'termUpsert',
        'INSERT INTO terms (field, term, id, df) VALUES (?, ?, ?, ?) ON CONFLICT (field, term) DO UPDATE SET df = df + excluded.df RETURNING id',
      )
      .pluck()
      .get(field, term, state.nextTermId, addDf) as number;
    if (id === state.nextTermId) state.nextTermId++;
    return id;
  }

  #post(groups: Groups, state: IndexState): void {
    // A row per term of the batch (its steps in one block, see posting-block.ts), many rows per
    // statement: the cost of a row is mostly the call into SQLite.
    const many = this.#s.get(
      'postMany',
      `INSERT INTO postings (term, last, first, n, data) VALUES ${'(?, ?, ?, ?, ?), '.repeat(POST_ROWS - 1)}(?, ?, ?, ?, ?)`,
    );
    const one = this.#s.get('post', POST_ONE);
    // Terms by id: [id, field, term index]. Fields in order, each in first-added order, so new
    // terms take their ids in the order they were seen.
    const byId: [number, number, number][] = [];
    groups.forEach((g, field) => {
      for (let t = 0; t < g.terms.length; t++) {
        byId.push([this.#termId(field, g.terms[t]!, g.counts[t]!, state), field, t]);
      }
    });
    // In key order, the rows of a batch go into the B-tree in one sweep instead of at random.
    byId.sort((a, b) => a[0] - b[0]);
    const postings = groups.map((g) => g.byTerm());
    const args: (number | Buffer)[] = [];
    for (const [id, field, t] of byId) {
      const { start, steps, tfs } = postings[field]!;
      const from = start[t]!;
      const to = start[t + 1]!;
      const b = encodePostings(steps.subarray(from, to), tfs.subarray(from, to));
      args.push(id, b.last, b.first, to - from, b.data);
      if (args.length === POST_ROWS * 5) {
        many.run(args);
        args.length = 0;
      }
    }
    for (let i = 0; i < args.length; i += 5) one.run(args.slice(i, i + 5));
  }

  /**
   * A document's ranked statistics, and its postings queued in `groups`. Its features are those
   * of its analysis row (stored once, by content address, here if it is not yet): a document row
   * stays a few bytes, so a scan that numbers thousands of turns reads few pages.
   */
  #doc(step: number, a: StoredAnalysis, groups: Groups, state: IndexState): void {
    const analysis = this.#analyses.analysisId(a.akey) ?? this.#analyses.putAnalysis(a);
    this.#s
      .get(
        'doc',
        'INSERT INTO docs (step, length, parts, part_length, analysis) VALUES (?, ?, ?, ?, ?)',
      )
      .run(step, a.length, a.parts, a.partLength, analysis);
    const ranked = groups[FIELD_RANKED];
    for (let i = 0; i < a.terms.length; i++) ranked.add(a.terms[i]!, step, a.tfs[i]!);
    state.rankedDocs++;
    state.rankedLength += a.length;
    state.rankedParts += a.parts;
    state.rankedPartLength += a.partLength;
  }

  /** Logs a change for other processes' caches (`op`: see `ChangeRow`). */
  change(step: number, op: number): void {
    this.#s.get('change', 'INSERT INTO changes (step, op) VALUES (?, ?)').run(step, op);
  }
}
