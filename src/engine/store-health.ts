import { setImmediate as turn } from 'node:timers/promises';
// The store's health as `status` and `validate` report it: nodes counted by their `sanitized`
// flag, and the whole store checked node by node and file by file. Read-only: repair acts on
// what this reports.
import type { Tokenizer } from '../extract/tokenizer.js';
import { isTempFileName } from '../fs/durable-fs.js';
import { isContextFoldError } from '../protocol/errors.js';
import { type HydrationPolicy, policyHash } from '../protocol/policy.js';
import { type IndexEntry, PROJECTION_VERSION } from '../protocol/types.js';
import type { IndexWarning, NodeFlag } from '../store/index-backend.js';
import type { StoreLayout } from '../store/layout.js';
import type { EngineStore } from './open-store.js';
import type { RetrievalMode, StatusResult, ValidateResult, ValidationProblem } from './types.js';

/** A read against the engine's synced index (see `ContextFold`'s reads: rebuilt once if broken). */
export type EngineRead = <T>(fn: () => T | Promise<T>, load?: readonly number[]) => Promise<T>;

/** What the health checks take from the engine: its store, its reads and its flag memo. */
export interface HealthSources {
  store: EngineStore;
  /** The directory's paths (a local store; a database store has no directory). */
  layout: StoreLayout | null;
  /** The engine's directory or URL, named in problems. */
  dir: string;
  read: EngineRead;
  /** Every index entry in step order, page by page (`ContextFold.entryPages`). */
  entryPages: (options: { pageSize?: number }) => AsyncIterable<IndexEntry[]>;
  /** The engine's `sanitized` flags by artifact hash (folds fill it too). */
  sanitizedByArtifact: Map<string, boolean>;
  /** Where warnings go (the engine's `onWarning`). */
  warn: (warning: IndexWarning) => void;
}

/** Nodes by their `sanitized` flag, as `status` reports them. */
interface FlagCounts {
  sanitized_nodes: number;
  unsanitized_nodes: number;
  unreadable_nodes: number;
}

/** The engine's settings `status` reports beside the store's counts (its public fields). */
export interface StatusSettings {
  readonly dir: string;
  readonly sessionId: string;
  readonly policy: HydrationPolicy;
  readonly tokenizer: Tokenizer;
  readonly retrieval: RetrievalMode;
  readonly redact: boolean;
}

/** The engine's health checks (`status`, `validate`), over its sources. */
export class StoreHealth {
  private readonly src: HealthSources;

  constructor(src: HealthSources) {
    this.src = src;
  }

  /**
   * Counts and settings of the store, and the state of its derived index. A store whose files
   * cannot be loaded (an unreadable `recall_index.json`, journal or eviction log) is refused as
   * every read refuses it: its counts would be those of an index derived before the damage.
   */
  async status(engine: StatusSettings): Promise<StatusResult> {
    const { s, index } = await this.src.read(() => {
      this.src.store.assertConsistent();
      const stats = this.src.store.stats();
      const path = this.src.store.indexPath;
      return {
        s: stats,
        index: {
          path,
          state: path === null && stats.entries > 0 ? ('in-memory' as const) : ('fresh' as const),
          pending_analysis: this.src.store.pendingCount(),
        },
      };
    });
    const flags = await this.flagCounts();
    return {
      dir: engine.dir,
      session_id: engine.sessionId,
      projection_version: PROJECTION_VERSION,
      nodes: s.entries,
      evicted: s.evicted,
      journal_entries: s.journalRecords,
      total_token_estimate: s.tokenEstimate,
      policy: engine.policy,
      folding_policy_hash: policyHash(engine.policy),
      tokenizer: engine.tokenizer.name,
      retrieval: engine.retrieval,
      index,
      redact: engine.redact,
      ...flags,
    };
  }

  /**
   * Nodes by their `sanitized` flag. The flag is in the node files only (the reference index has
   * no such field): the derived index records it by artifact hash when a node is folded or first
   * read here, so only nodes it has never seen (a reference-written store, a rebuilt index) are
   * read, and each once.
   */
  private async flagCounts(): Promise<FlagCounts> {
    const known = await this.src.read(() => this.src.store.flagCounts());
    const flags = {
      sanitized_nodes: known.sanitized,
      unsanitized_nodes: known.unsanitized,
      unreadable_nodes: 0,
    };
    if (known.unknown === 0) return flags;
    for (let after = -1; ; ) {
      const page = await this.src.read(() => this.src.store.unflagged(after, 1024));
      if (page.length === 0) break;
      after = page[page.length - 1]!.step_id;
      await this.src.store.load(
        page
          .filter((e) => !this.src.sanitizedByArtifact.has(e.artifact_sha256))
          .map((e) => e.step_id),
      );
      const found: NodeFlag[] = [];
      for (const e of page) {
        const f = this.sanitizedFlag(e);
        if (f === null) flags.unreadable_nodes++;
        else {
          found.push({ artifact_sha256: e.artifact_sha256, sanitized: f });
          if (f) flags.sanitized_nodes++;
          else flags.unsanitized_nodes++;
        }
      }
      this.src.store.putFlags(found);
    }
    return flags;
  }

  /**
   * A node's `sanitized` flag, read from its canonical file (memoised by artifact hash, which
   * names the file's content); null when the file is not contained in the store, cannot be
   * read or parsed, or is not the indexed artifact. Reads, never verifies hashes: `validate`
   * does that.
   */
  private sanitizedFlag(entry: IndexEntry): boolean | null {
    const known = this.src.sanitizedByArtifact.get(entry.artifact_sha256);
    if (known !== undefined) return known;
    try {
      const text = this.src.store.readNodeText(entry);
      if (text === null) return null;
      const node = JSON.parse(text);
      if (node?.artifact_sha256 !== entry.artifact_sha256) return null;
      const flag = node.sanitized === true;
      this.src.sanitizedByArtifact.set(entry.artifact_sha256, flag);
      return flag;
    } catch {
      return null;
    }
  }

  /**
   * Checks the whole store (see `ContextFold.validate`), walking the index page by page and
   * giving the event loop a turn between pages.
   */
  async validate(): Promise<Omit<ValidateResult, 'warnings'>> {
    const store = this.src.store;
    await store.sync();
    const problems: ValidationProblem[] = [];
    const lp = store.loadProblem;
    if (lp) problems.push({ kind: lp.kind, step_id: null, path: lp.path, message: lp.message });
    let checked = 0;
    let sanitized = 0;
    const indexed = new Set<number>();
    let since = performance.now();
    for await (const page of this.src.entryPages({ pageSize: 64 })) {
      await store.load(page.map((e) => e.step_id));
      for (const entry of page) {
        checked++;
        indexed.add(entry.step_id);
        const p = verifyProblem(store, entry);
        if (p === 'sanitized') sanitized++;
        else if (p) problems.push(p);
        // A turn of the event loop every few milliseconds: a server keeps serving meanwhile.
        if (performance.now() - since > 8) {
          await turn();
          since = performance.now();
        }
      }
    }
    const { steps, stray } = await store.listNodes();
    // A node that another process committed after the walk above passed its step has an entry
    // now: not an orphan (validate holds no lock; the walk is not one instant).
    const unwalked = [...steps.keys()].filter((step) => !indexed.has(step));
    const committed = new Set(
      unwalked.length === 0
        ? []
        : await this.src.read(() => unwalked.filter((step) => store.get(step) !== undefined)),
    );
    for (const [step] of steps) {
      if (!indexed.has(step) && !committed.has(step)) {
        const path = store.nodePath(step);
        problems.push({
          kind: 'orphaned_node',
          step_id: step,
          path,
          message: `cold node file has no index entry (OrphanedNodeError): ${path}`,
        });
      }
    }
    for (const name of stray) {
      const path = `${this.src.layout?.coldDir ?? this.src.dir}/${name}`;
      problems.push({
        kind: 'integrity',
        step_id: null,
        path,
        message: isTempFileName(name)
          ? `leftover temp file of an interrupted write (a process ended before it committed; not part of the store): run 'contextfold repair --apply' to move it to quarantine: ${path}`
          : `unexpected entry in cold_nodes: ${path}`,
      });
    }
    // A read-only (or unwritable) store keeps a killed rebuild's file: said, never removed here.
    if (store.kind === 'local') {
      for (const path of store.deadBuildPaths()) {
        this.src.warn({
          code: 'DEAD_BUILD_FILE',
          message: `leftover file of a rebuild or compaction whose process is gone: ${path}; the next command with write access to the store removes it (or delete it)`,
          path,
        });
      }
    }
    const index = await store.checkIndex();
    if (index.state === 'stale') {
      problems.push({
        kind: 'index',
        step_id: null,
        path: index.path,
        message: `the derived index is stale (${index.message}): run 'contextfold reindex': ${index.path}`,
      });
    }
    return { ok: problems.length === 0, checked, sanitized, problems };
  }
}

/** Why a node fails verification, or whether it verified as sanitized (redacted) or not. */
function verifyProblem(
  store: EngineStore,
  entry: IndexEntry,
): ValidationProblem | 'sanitized' | null {
  try {
    return store.verifyNode(entry).node.sanitized === true ? 'sanitized' : null;
  } catch (e) {
    if (!isContextFoldError(e)) throw e;
    const kind =
      e.code === 'PATH_CONTAINMENT'
        ? 'path_containment'
        : e.code === 'BROKEN_REFERENCE'
          ? 'broken_reference'
          : 'integrity';
    return {
      kind,
      step_id: entry.step_id,
      path: String(e.details.path ?? entry.file_path),
      message: e.message,
    };
  }
}
