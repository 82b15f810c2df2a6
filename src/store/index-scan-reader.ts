// The reads of a scan: term frequencies and posting lists (all of a term's, or its most recent
// ones without decoding older blocks), term prefixes, and the per-document statistics and
// details a ranked scan numbers and scores. Called many times a turn: statements prepared once.
import { type StoredBody, unpack } from './index-body.js';
import { IndexUnusable } from './index-schema.js';
import type { IndexStatements } from './index-statements.js';
import { decodePostings, type PostingBlock, PostingBlockError } from './posting-block.js';

/** Ranked statistics of one analysed node (what a scan reads for every turn it numbers). */
export interface DocStats {
  step: number;
  length: number;
}

/** What a scan reads only for the turns it scores in full: the analysis and the token key. */
export interface DocDetail {
  step: number;
  /** The analyzer's opaque features (see `decodeStoredAnalysis`). */
  features: string;
  /** Of the document's index entry: what its token count is stored under, without the entry. */
  payload_sha256: string;
  token_estimate: number;
  /** The payload's stored token count under the tokenizer asked for, if stored. */
  tokens?: number;
}

/**
 * What JSON escapes and SQLite's JSON reader may not give back as the driver binds it: control
 * characters and lone surrogates (a term holding one is looked up alone).
 */
const ASKED_ALONE =
  /[\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The `k`-th highest step of the blocks (k ≤ their postings). */
function kthHighest(blocks: readonly PostingBlock[], k: number): number {
  if (blocks.length === 1) return blocks[0]!.steps[blocks[0]!.steps.length - k]!;
  const all = blocks.flatMap((b) => b.steps).sort((a, b) => b - a);
  return all[k - 1]!;
}

/** The `limit` highest postings of the blocks, ascending. */
function newestOf(blocks: readonly PostingBlock[], limit: number): PostingBlock {
  if (blocks.length === 1) {
    const b = blocks[0]!;
    const from = Math.max(0, b.steps.length - limit);
    return from === 0 ? b : { steps: b.steps.slice(from), tfs: b.tfs.slice(from) };
  }
  const pairs: [number, number][] = [];
  for (const b of blocks)
    for (let i = 0; i < b.steps.length; i++) pairs.push([b.steps[i]!, b.tfs[i]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const kept = pairs.slice(Math.max(0, pairs.length - limit));
  return { steps: kept.map((p) => p[0]), tfs: kept.map((p) => p[1]) };
}

/** A block's postings; a damaged block makes the index unusable (it is rebuilt). */
export function decodeBlock(path: string, data: Uint8Array, n: number): PostingBlock {
  try {
    return decodePostings(data, n);
  } catch (e) {
    if (e instanceof PostingBlockError) throw new IndexUnusable(`${path}: ${e.message}`);
    throw e;
  }
}

/** The scan-side reader of one index connection (`path` names the file in errors). */
export class IndexScanReader {
  readonly #s: IndexStatements;
  readonly #path: string;

  constructor(s: IndexStatements, path: string) {
    this.#s = s;
    this.#path = path;
  }

  /** Document frequency of a term in a field (0 when unknown). */
  df(field: number, term: string): number {
    return (
      (this.#s
        .get('df', 'SELECT df FROM terms WHERE field = ? AND term = ?')
        .pluck()
        .get(field, term) as number | undefined) ?? 0
    );
  }

  /**
   * Document frequencies of terms in a field, aligned with them (0 when unknown), in one query:
   * a prompt of a few MB asks for tens of thousands. A term JSON cannot carry to SQLite as the
   * driver binds it (a lone surrogate, a control character) is asked alone.
   */
  dfMany(field: number, terms: readonly string[]): number[] {
    const out = new Array<number>(terms.length).fill(0);
    const batch: string[] = [];
    const at: number[] = [];
    terms.forEach((term, i) => {
      if (!ASKED_ALONE.test(term)) {
        batch.push(term);
        at.push(i);
      } else out[i] = this.df(field, term);
    });
    const rows = this.#s
      .get(
        'dfMany',
        'SELECT j.key, t.df FROM json_each(?) j CROSS JOIN terms t ON t.field = ? AND t.term = j.value',
      )
      .raw()
      .all(JSON.stringify(batch), field) as [number, number][];
    for (const [i, df] of rows) out[at[i]!] = df;
    return out;
  }

  /** Every step holding a term, ascending. */
  allPostings(field: number, term: string): number[] {
    const rows = this.#s
      .get(
        'allPostings',
        'SELECT p.n, p.data FROM terms t JOIN postings p ON p.term = t.id WHERE t.field = ? AND t.term = ? ORDER BY p.last',
      )
      .raw()
      .all(field, term) as [number, Uint8Array][];
    if (rows.length === 1) return decodeBlock(this.#path, rows[0]![1], rows[0]![0]).steps;
    const steps: number[] = [];
    for (const [n, data] of rows) {
      for (const s of decodeBlock(this.#path, data, n).steps) steps.push(s);
    }
    // Blocks of batches folded out of step order overlap.
    for (let i = 1; i < steps.length; i++) {
      if (steps[i]! <= steps[i - 1]!) return steps.sort((a, b) => a - b);
    }
    return steps;
  }

  /**
   * The postings of a term, ascending: the `limit` most recent with their term frequencies, or
   * all of them (`limit` undefined; reference postings, whose frequency is always 1).
   */
  postingList(field: number, term: string, limit?: number): { steps: number[]; tfs: number[] } {
    if (limit !== undefined) return this.recentPostings(field, term, limit);
    const steps = this.allPostings(field, term);
    return { steps, tfs: new Array<number>(steps.length).fill(1) };
  }

  /** The `limit` highest steps holding a term with their term frequencies, ascending. */
  recentPostings(field: number, term: string, limit: number): { steps: number[]; tfs: number[] } {
    if (limit <= 0) return { steps: [], tfs: [] };
    const rows = this.#s
      .get(
        'recent',
        'SELECT p.last, p.n, p.data FROM terms t JOIN postings p ON p.term = t.id WHERE t.field = ? AND t.term = ? ORDER BY p.last DESC',
      )
      .raw()
      .iterate(field, term) as IterableIterator<[number, number, Uint8Array]>;
    // Blocks newest first. Blocks of batches folded out of step order overlap, so reading stops
    // only at a block whose highest step is below the `limit`-th highest step read so far.
    const blocks: PostingBlock[] = [];
    let read = 0;
    let floor = -1;
    for (const [last, n, data] of rows) {
      if (read >= limit && last < floor) break;
      const b = decodeBlock(this.#path, data, n);
      blocks.push(b);
      read += n;
      if (read >= limit) floor = kthHighest(blocks, limit);
    }
    return newestOf(blocks, limit);
  }

  /**
   * The `limit` most frequent terms of a field (ties in code-point order) that start with
   * `prefix`, are longer than it and have at most `maxLength` code points. SQLite sorts the
   * range: a prefix with 30,000 extensions costs one statement, not 30,000 lookups.
   */
  topTermsWithPrefix(field: number, prefix: string, maxLength: number, limit: number): string[] {
    return this.#s
      .get(
        'topPrefix',
        `SELECT term FROM terms WHERE field = ? AND term > ? AND term < ? AND length(term) <= ?
       ORDER BY df DESC, term LIMIT ?`,
      )
      .pluck()
      .all(field, prefix, `${prefix}\u{10FFFF}`, maxLength, limit) as string[];
  }

  /** {@link topTermsWithPrefix} of each prefix with its `maxLength`, aligned with them. */
  topTermsWithPrefixMany(
    field: number,
    asks: readonly { prefix: string; maxLength: number }[],
    limit: number,
  ): string[][] {
    return asks.map((a) => this.topTermsWithPrefix(field, a.prefix, a.maxLength, limit));
  }

  /** Terms of a field that start with `prefix` and are longer than it. */
  termsWithPrefix(field: number, prefix: string): string[] {
    // Code-point order is byte order in UTF-8: every extension lies in [prefix, prefix + U+10FFFF).
    return this.#s
      .get(
        'prefix',
        'SELECT term FROM terms WHERE field = ? AND term > ? AND term < ? ORDER BY term',
      )
      .pluck()
      .all(field, prefix, `${prefix}\u{10FFFF}`) as string[];
  }

  /** Ranked statistics of the given steps (entries without an analysis are absent). */
  docs(steps: readonly number[]): DocStats[] {
    return this.#s
      .get(
        'docs',
        'SELECT d.step AS step, d.length AS length FROM json_each(?) j JOIN docs d ON d.step = j.value',
      )
      .all(JSON.stringify(steps)) as DocStats[];
  }

  /**
   * The analyses and token keys of the analysed steps among `steps` (others are absent), in one
   * query: a scan reads those of its candidates together. With `tokenizer`, each payload's
   * stored count under it too.
   */
  docDetails(steps: readonly number[], tokenizer?: string): DocDetail[] {
    const rows = this.#s
      .get(
        'docDetails',
        `SELECT d.step, a.features, e.payload_sha256, e.token_estimate, t.count
         FROM json_each(?) j JOIN docs d ON d.step = j.value JOIN analyses a ON a.id = d.analysis
         JOIN entries e ON e.step = d.step
         LEFT JOIN tokens t ON t.payload_sha256 = e.payload_sha256 AND t.tokenizer = ?`,
      )
      .raw()
      .all(JSON.stringify(steps), tokenizer ?? null) as [
      number,
      StoredBody,
      string,
      number,
      number | null,
    ][];
    return rows.map(([step, body, payload, estimate, count]) => ({
      step,
      features: unpack(body),
      payload_sha256: payload,
      token_estimate: estimate,
      ...(count === null ? {} : { tokens: count }),
    }));
  }

  /** Largest analysed step (-1 when none). */
  lastDocStep(): number {
    return this.#s
      .get('lastDoc', 'SELECT coalesce(max(step), -1) FROM docs')
      .pluck()
      .get() as number;
  }
}
