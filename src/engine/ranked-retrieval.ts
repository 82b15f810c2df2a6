import type { Tokenizer } from '../extract/tokenizer.js';
import { scanPage } from '../guard/scan-page.js';
import { isContextFoldError } from '../protocol/errors.js';
import { pageFailure } from '../protocol/results.js';
import type { IndexEntry } from '../protocol/types.js';
import {
  analysisKey,
  analyzeNode,
  decodeStoredAnalysis,
  type NodeAnalysis,
  storedAnalysis,
} from '../retrieval/node-analysis.js';
import { focusWindow } from '../retrieval/ranked-focus.js';
import { type DocLayout, type RankedDoc, rankedDoc } from '../retrieval/ranked-index.js';
import {
  type RankedPick,
  type RankedScanResult,
  type RankedTuning,
  rankedScan,
} from '../retrieval/ranked-scan.js';
import { DocNumbering, type RankedSource, rankedView } from '../retrieval/ranked-view.js';
import { StepMap } from '../retrieval/step-map.js';
import type { DocDetail, DocStats, IndexBackend } from '../store/index-backend.js';
import type { Page, PageInFailure, PageInResult } from './types.js';

/** Pending nodes analysed between two turns of the event loop. */
const ANALYSE_BATCH = 48;
/**
 * Analyses stored per write transaction. A transaction writes every index page its postings
 * touch, so rounds of 48 spent a quarter of a rebuild committing (5,000 nodes: 18.0 s with a
 * commit per 48, 14.3 s per 512, 13.4 s per 1,024). A store is one synchronous stretch (about
 * half a second for 512), so the round stays well under a second of blocked event loop.
 */
const ATTACH_ROUND = 512;

/** What a document's token count is stored under (not the features text beside it). */
const tokenKey = (d: DocDetail): Pick<DocDetail, 'payload_sha256' | 'token_estimate'> => ({
  payload_sha256: d.payload_sha256,
  token_estimate: d.token_estimate,
});

/**
 * Decoded analyses a process keeps at most (about 12 KB each for a 2 KB turn, plus its scan
 * layout: about 7 KB for the 274 keys of a bench turn).
 */
const MAX_DECODED = 8192;

/**
 * The stored documents whose analysis is decoded, oldest first: a long-lived process (a server
 * answering varied prompts over a large store) would otherwise end up holding every analysis it
 * ever scored. The oldest is forgotten (decoded again if scored again) when the set is full.
 */
class DecodedSet {
  readonly #ring: (StoredDoc | undefined)[];
  #next = 0;
  constructor(readonly size: number) {
    this.#ring = new Array(size);
  }

  add(doc: StoredDoc): void {
    this.#ring[this.#next]?.forget();
    this.#ring[this.#next] = doc;
    this.#next = (this.#next + 1) % this.size;
  }
}

/**
 * A document of the stored index: its statistics at hand, its analysis decoded on the first
 * read of a field that comes from it (a scan numbers every turn that holds a prompt key, and the
 * next, but reads the analyses of its best candidates only). A class with one getter per field,
 * so that every document has the same shape and each field read is a plain call.
 */
class StoredDoc {
  readonly stepId: number;
  readonly length: number;
  /** The scan's packed form of the analysis (see `docLayout`), dropped with it. */
  layout: DocLayout | undefined = undefined;
  /** Scored once without a layout (see `scoringLayout`), dropped with the analysis. */
  scoredOnce = false;
  /** What the token count is stored under, once the analysis row was read. */
  #key: Pick<DocDetail, 'payload_sha256' | 'token_estimate'> | undefined;
  #analysis: NodeAnalysis | undefined;
  #tokens: number | undefined;
  constructor(
    stored: DocStats,
    private readonly deps: Pick<RankedRetrievalDeps, 'backend' | 'tokensOf' | 'knownTokens'>,
    private readonly decoded: DecodedSet,
  ) {
    this.stepId = stored.step;
    this.length = stored.length;
  }

  /** The analysis row and token key, read only for a turn that is scored in full. */
  #stored(): DocDetail {
    const [detail] = this.deps.backend.docDetails([this.stepId]);
    // Numbered by this scan and gone now: another process dropped it (a repair), which starts
    // a new index generation; the read runs again on the rebuilt view.
    if (!detail) {
      return this.deps.backend.reportBroken(`the ranked document of step ${this.stepId} is gone`);
    }
    return detail;
  }

  /**
   * Tokens of the whole payload: stored per tokenizer beside the index (found by the payload
   * hash the document row carries, so its entry is not decoded), counted if missing.
   */
  get tokens(): number {
    if (this.#tokens === undefined) {
      this.#key ??= tokenKey(this.#stored());
      this.#tokens = this.deps.knownTokens(this.#key) ?? this.deps.tokensOf(this.stepId);
    }
    return this.#tokens;
  }

  get error(): boolean {
    return this.analysis().error;
  }
  get prose(): number {
    return this.analysis().prose;
  }
  get shapes(): number {
    return this.analysis().shapes;
  }
  get keys(): readonly string[] {
    return this.analysis().keys;
  }
  get head(): readonly number[] {
    return this.analysis().head;
  }
  get blocks(): NodeAnalysis['blocks'] {
    return this.analysis().blocks;
  }

  /** Whether the analysis is decoded (else the next read of one of its fields reads it). */
  get isDecoded(): boolean {
    return this.#analysis !== undefined;
  }

  /** Takes the row a batch read of the scan's candidates found (see `RankedRetrieval`). */
  adopt(detail: DocDetail): void {
    if (!this.#analysis) this.#decode(detail);
  }

  analysis(): NodeAnalysis {
    return this.#analysis ?? this.#decode(this.#stored());
  }

  #decode(detail: DocDetail): NodeAnalysis {
    const decoded = decodeStoredAnalysis(detail.features, 0);
    // A stored analysis that does not decode is a damaged index, never ranked with: the
    // index is rebuilt (its analyses recomputed from verified nodes) and the read runs again.
    if (!decoded) {
      return this.deps.backend.reportBroken(
        `the ranked analysis of step ${this.stepId} does not decode`,
      );
    }
    // The features text is not kept: the decoded analysis is what is read from now on.
    this.#key = tokenKey(detail);
    this.#analysis = decoded;
    this.decoded.add(this);
    return decoded;
  }

  /** Drops the decoded analysis (see {@link DecodedSet}); the next read decodes it again. */
  forget(): void {
    this.#analysis = undefined;
    this.layout = undefined;
    this.scoredOnce = false;
    this.#key = undefined;
    this.#tokens = undefined;
  }
}

/** What the ranked retrieval needs from the engine. */
export interface RankedRetrievalDeps {
  tokenizer: Tokenizer;
  backend: IndexBackend;
  /** The verified payload text of a step; throws a contextfold error if it fails verification. */
  verifiedText(stepId: number): string;
  /** The index entry of a step, if indexed. */
  entryOf(stepId: number): IndexEntry | undefined;
  /** Tokens of a step's whole payload under the engine's tokenizer (stored, or counted). */
  tokensOf(stepId: number): number;
  /** Tokens known for a payload without counting (stored), if any. */
  knownTokens(entry: Pick<IndexEntry, 'payload_sha256' | 'token_estimate'>): number | undefined;
  /**
   * Optional: keeps a payload's stored count for {@link knownTokens}, when a scan reads those
   * of its candidates in one query (without it, each is looked up on its own).
   */
  rememberTokens?(payloadSha256: string, count: number): void;
}

/** Caps of one page-in, and the live boundary (see `RankedScanOptions.liveFrom`). */
export interface RankedCaps {
  perCall: number;
  perTurn: number;
  liveFrom?: number;
  lossy?: readonly number[];
  /** Truncated pages also show the payload's last lines (see `ScanOptions.tail`). */
  tail?: boolean;
}

/** A node that failed verification, ranked on its entry's terms for this process only. */
interface Unverified {
  artifact: string;
  analysis: NodeAnalysis;
}

/** The analysis of an entry's recorded terms (for a node whose content cannot be trusted). */
function entryTermsText(e: IndexEntry): string {
  return [...e.identifiers, ...e.files, ...e.errors].join('\n');
}

/**
 * The engine side of `retrieval: 'ranked'`. Analyses live in the store's index, keyed by
 * content (folds store them from the text in hand; nodes that arrive otherwise, e.g. from a
 * reference-written store, are analysed from their verified content on the first ranked scan
 * and stored). A scan reads only the postings of the prompt's keys; page-in reads and verifies
 * only the picked nodes.
 *
 * Fail closed and loud: a node that does not verify is ranked on the terms its index entry
 * records (never its unverified text, never stored), so if it owns an intent its page-in is
 * refused and reported; the intent is never silently handed to another turn.
 *
 * @example
 * const ranked = new RankedRetrieval({ tokenizer, backend, verifiedText, entryOf, tokensOf, knownTokens });
 * await ranked.prepare();
 * const r = ranked.pageIn('which port?', { perCall: 3000, perTurn: 3500 });
 */
export class RankedRetrieval {
  readonly #deps: RankedRetrievalDeps;
  readonly #tuning: Partial<RankedTuning>;
  readonly #unverified = new Map<number, Unverified>();
  /** Decoded statistics of analysed documents, for the index generation they were read from. */
  #docs = new StepMap<RankedDoc>();
  /** The numbering of {@link #docs} that the views of the stored index share (same lifetime). */
  #numbering = new DocNumbering();
  /** The documents of {@link #docs} whose analysis is decoded, bounded. */
  #decoded: DecodedSet;
  /** Steps with no analysed document, while the count of analysed documents stays the same. */
  #absent = new Set<number>();
  #docsGeneration = '';
  #docsCount = -1;

  constructor(
    deps: RankedRetrievalDeps,
    tuning: Partial<RankedTuning> = {},
    options: {
      /** Decoded analyses kept at most (default 8,192): bounds a long-lived process's memory. */
      maxDecoded?: number;
    } = {},
  ) {
    this.#deps = deps;
    this.#tuning = tuning;
    this.#maxDecoded = Math.max(1, options.maxDecoded ?? MAX_DECODED);
    this.#decoded = new DecodedSet(this.#maxDecoded);
  }

  readonly #maxDecoded: number;

  /**
   * Analyses every indexed node the index holds no analysis for (read and verified; stored
   * per {@link ATTACH_ROUND}, and on the way out when a read fails, so an interrupted catch-up
   * keeps its progress; the event loop gets a turn every {@link ANALYSE_BATCH} nodes).
   * `onProgress` hears the nodes analysed so far at each of those turns.
   */
  async prepare(onProgress?: (done: number, total: number) => void): Promise<void> {
    // One catch-up at a time: a second caller waits for it, then finds what is left (nothing,
    // unless nodes arrived meanwhile) instead of analysing the same nodes beside it.
    while (this.#preparing) await this.#preparing.catch(() => {});
    const run = this.#prepareNow(onProgress);
    this.#preparing = run;
    try {
      await run;
    } finally {
      this.#preparing = undefined;
    }
  }

  #preparing: Promise<void> | undefined;

  async #prepareNow(onProgress?: (done: number, total: number) => void): Promise<void> {
    const { backend, tokenizer } = this.#deps;
    const total = backend.pendingCount();
    if (total === 0) {
      this.#unverified.clear();
      return;
    }
    let done = 0;
    const stillPending = new Set<number>();
    let after = -1;
    type Attach = Parameters<IndexBackend['attachAnalyses']>[0][number];
    type Tokens = Parameters<IndexBackend['putTokens']>[0][number];
    let attach: Attach[] = [];
    let tokens: Tokens[] = [];
    const store = () => {
      backend.putTokens(tokens);
      backend.attachAnalyses(attach);
      attach = [];
      tokens = [];
    };
    try {
      for (;;) {
        const batch = backend.pending(after, ANALYSE_BATCH);
        if (batch.length === 0) break;
        after = batch[batch.length - 1]!.step;
        for (const p of batch) stillPending.add(p.step);
        await backend.load(batch.map((p) => p.step));
        for (const p of batch) {
          const entry = this.#deps.entryOf(p.step);
          if (!entry || this.#unverified.get(p.step)?.artifact === entry.artifact_sha256) continue;
          let text: string;
          try {
            text = this.#deps.verifiedText(p.step);
          } catch (e) {
            if (!isContextFoldError(e)) throw e;
            const terms = entryTermsText(entry);
            this.#unverified.set(p.step, {
              artifact: entry.artifact_sha256,
              analysis: analyzeNode({
                summary: entry.summary,
                text: terms,
                tokens: tokenizer.count(terms),
              }),
            });
            continue;
          }
          // Tokens are not part of a stored analysis (they are kept per tokenizer, below).
          const analysis = analyzeNode({ summary: entry.summary, text, tokens: 0 });
          attach.push({
            ...p,
            analysis: { akey: analysisKey(entry), ...storedAnalysis(analysis) },
          });
          if (tokenizer.name !== 'reference' && this.#deps.knownTokens(entry) === undefined) {
            tokens.push({
              payload_sha256: entry.payload_sha256,
              tokenizer: tokenizer.name,
              count: tokenizer.count(text),
            });
          }
        }
        if (attach.length >= ATTACH_ROUND) store();
        done += batch.length;
        onProgress?.(Math.min(done, total), total);
        await new Promise<void>((r) => setImmediate(r));
      }
    } finally {
      // Also when a read fails midway: what was analysed is kept.
      store();
    }
    // Unverified nodes that were analysed elsewhere since (a restored node, a reindex) or
    // whose entry changed are looked at again.
    for (const [step, u] of this.#unverified) {
      const current = this.#deps.entryOf(step)?.artifact_sha256;
      if (!stillPending.has(step) || current !== u.artifact) this.#unverified.delete(step);
    }
  }

  /** The index as one prompt sees it: stored analyses plus this process's unverified nodes. */
  #source(): RankedSource {
    const extra = [...this.#unverified].map(([step, u]) => ({ step, analysis: u.analysis }));
    const stored = this.#storedSource();
    return extra.length === 0 ? stored : withUnverified(stored, extra);
  }

  /** The stored ranked index, its documents decoded once per process and index generation. */
  #storedSource(): RankedSource {
    const { backend } = this.#deps;
    const stats = backend.fieldStats('ranked');
    if (backend.generation !== this.#docsGeneration) {
      this.#docs = new StepMap();
      this.#numbering = new DocNumbering();
      this.#decoded = new DecodedSet(this.#maxDecoded);
      this.#docsGeneration = backend.generation;
    }
    if (stats.docs !== this.#docsCount) {
      this.#absent = new Set();
      this.#docsCount = stats.docs;
    }
    return {
      size: stats.docs,
      blocks: stats.parts,
      blockLength: stats.partLength,
      lastStep: stats.lastStep,
      docFrequency: (key) => backend.df('ranked', key),
      ...(backend.dfMany ? { docFrequencies: (keys) => backend.dfMany!('ranked', keys) } : {}),
      topExtensions: (prefix, maxLength, limit) =>
        backend.topTermsWithPrefix('ranked', prefix, maxLength, limit),
      ...(backend.topTermsWithPrefixMany
        ? {
            topExtensionsMany: (asks, limit) =>
              backend.topTermsWithPrefixMany!('ranked', asks, limit),
          }
        : {}),
      keysWithPrefix: (prefix) => [...new Set(backend.termsWithPrefix('ranked', prefix))],
      recentPostings: (key, limit) => backend.postings('ranked', key, limit),
      docs: (steps) => this.#storedDocs(steps),
      prefetch: (docs) => this.#prefetch(docs),
      numbering: this.#numbering,
      readVersion: backend.readVersion,
    };
  }

  /** Documents of `steps` (undefined: not analysed), read from the index once per process. */
  #storedDocs(steps: readonly number[]): (RankedDoc | undefined)[] {
    const out: (RankedDoc | undefined)[] = new Array(steps.length);
    const missing: number[] = [];
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]!;
      const d = this.#docs.get(step);
      // Compared with undefined: a truthiness test reads each document's map (a cache miss).
      if (d !== undefined) out[i] = d;
      else if (!this.#absent.has(step)) missing.push(i);
    }
    if (missing.length === 0) return out;
    const found = new Map<number, RankedDoc>();
    for (const d of this.#deps.backend.docStats(missing.map((i) => steps[i]!))) {
      const doc = this.#decode(d);
      this.#docs.set(d.step, doc);
      found.set(d.step, doc);
    }
    for (const i of missing) {
      const doc = found.get(steps[i]!);
      if (doc !== undefined) out[i] = doc;
      else this.#absent.add(steps[i]!);
    }
    return out;
  }

  /**
   * Reads the analyses of the stored documents a scan is about to score in full, in one query
   * with their token counts: a fresh process (the CLI, a hook) scores a few hundred, and a query
   * each was a tenth of its scan. At most as many as the process keeps decoded.
   */
  #prefetch(docs: readonly RankedDoc[]): void {
    const want = new Map<number, StoredDoc>();
    for (const d of docs) {
      if (want.size >= this.#maxDecoded) break;
      if (d instanceof StoredDoc && !d.isDecoded) want.set(d.stepId, d);
    }
    if (want.size === 0) return;
    const { backend, tokenizer, rememberTokens } = this.#deps;
    // The reference tokenizer's counts are the entries' estimates: none is stored to read.
    const name = tokenizer.name === 'reference' || !rememberTokens ? undefined : tokenizer.name;
    for (const detail of backend.docDetails([...want.keys()], name)) {
      want.get(detail.step)?.adopt(detail);
      if (detail.tokens !== undefined) rememberTokens?.(detail.payload_sha256, detail.tokens);
    }
  }

  #decode(d: DocStats): RankedDoc {
    // The analysis fields are getters on the prototype (see StoredDoc).
    return new StoredDoc(d, this.#deps, this.#decoded);
  }

  /** The ranked selection for a prompt (no page is read). Call {@link prepare} first. */
  scan(prompt: string, caps: RankedCaps): RankedScanResult {
    return rankedScan(rankedView(this.#source(), prompt, this.#tuning), prompt, {
      perCallCap: caps.perCall,
      perTurnCap: caps.perTurn,
      tuning: this.#tuning,
      ...(caps.liveFrom !== undefined ? { liveFrom: caps.liveFrom } : {}),
      ...(caps.lossy ? { lossy: caps.lossy } : {}),
    });
  }

  /**
   * Scan, then page in each pick verified: a window of whole lines around the matched keys, at
   * most the pick's cost. If an intent's owner fails verification, its companions and
   * alternatives are not paged either (its intent is never handed to another turn).
   */
  pageIn(prompt: string, caps: RankedCaps): PageInResult {
    const scan = this.scan(prompt, caps);
    const pages: Page[] = [];
    const failures: PageInFailure[] = [];
    const failed = new Set<number>();
    const { tokenizer } = this.#deps;
    let tokens = 0;
    for (const pick of scan.selected) {
      const principal = pick.companion_of ?? pick.alternative_of;
      if (principal !== undefined && failed.has(principal)) continue;
      try {
        const text = this.#deps.verifiedText(pick.step_id);
        const budget = Math.min(pick.cost, caps.perTurn - tokens);
        if (budget <= 0) continue;
        const entry = this.#deps.entryOf(pick.step_id)!;
        // The whole payload's count is stored (keyed by its verified hash): no vocabulary load
        // when the page is the whole payload.
        const known = this.#deps.knownTokens(entry);
        const w = focusWindow({
          content: text,
          focus: pick.focus,
          maxTokens: budget,
          tail: caps.tail === true,
          count: (s) => (s === text && known !== undefined ? known : tokenizer.count(s)),
        });
        pages.push(pageOf(pick, entry, w, budget));
        tokens += w.tokens;
      } catch (e) {
        if (!isContextFoldError(e)) throw e;
        failed.add(pick.step_id);
        failures.push(pageFailure(pick.step_id, e));
      }
    }
    return { scan, pages, failures, tokens };
  }
}

function pageOf(
  pick: RankedPick,
  entry: IndexEntry,
  w: ReturnType<typeof focusWindow>,
  maxTokens: number,
): Page {
  return {
    step_id: pick.step_id,
    content: w.text,
    tokens: w.tokens,
    payload_sha256: entry.payload_sha256,
    chunk: 0,
    chunks: 1,
    truncated: w.truncated,
    matched_terms: pick.matched_terms,
    window: {
      start_line: w.startLine,
      end_line: w.endLine,
      lines: w.lines,
      ...(w.tailLines > 0 ? { tail_lines: w.tailLines } : {}),
      max_tokens: maxTokens,
    },
    findings: scanPage(w.text),
  };
}

/**
 * A ranked source with this process's unverified nodes (analysed from their payloads, not yet
 * stored) beside the stored index: their statistics, keys, postings and documents added. The
 * query then reads every extension of a prefix (the stored ranking of extensions does not know
 * them).
 */
function withUnverified(
  stored: RankedSource,
  extra: readonly { step: number; analysis: NodeAnalysis }[],
): RankedSource {
  const holding = (key: string) => extra.filter((x) => x.analysis.keys.includes(key));
  // No shared numbering: the documents of unverified steps are made anew for each view.
  return {
    size: stored.size + extra.length,
    blocks: stored.blocks + extra.reduce((n, x) => n + x.analysis.blocks.length, 0),
    blockLength:
      stored.blockLength +
      extra.reduce((n, x) => n + x.analysis.blocks.reduce((m, b) => m + b.length, 0), 0),
    lastStep: extra.reduce((m, x) => Math.max(m, x.step), stored.lastStep),
    docFrequency: (key) => stored.docFrequency(key) + holding(key).length,
    keysWithPrefix: (prefix) => {
      const keys = new Set(stored.keysWithPrefix(prefix));
      for (const x of extra) {
        for (const k of x.analysis.keys) {
          if (k.length > prefix.length && k.startsWith(prefix)) keys.add(k);
        }
      }
      return [...keys];
    },
    recentPostings: (key, limit) => {
      const list = stored.recentPostings(key, limit);
      const more = holding(key);
      if (more.length === 0) return list;
      const merged = list.steps.map((s, i) => [s, list.tfs[i]!] as const);
      for (const x of more) merged.push([x.step, x.analysis.counts[x.analysis.keys.indexOf(key)]!]);
      merged.sort((a, b) => a[0] - b[0]);
      const tail = merged.slice(Math.max(0, merged.length - limit));
      return { steps: tail.map((m) => m[0]), tfs: tail.map((m) => m[1]) };
    },
    docs: (steps) => {
      const out = stored.docs(steps);
      const at = new Map(steps.map((s, i) => [s, i]));
      for (const x of extra) {
        const i = at.get(x.step);
        if (i !== undefined) out[i] = rankedDoc(x.step, x.analysis);
      }
      return out;
    },
    ...(stored.prefetch ? { prefetch: stored.prefetch } : {}),
  };
}
