import { isAbsolute, relative, sep } from 'node:path';
import { ContextFold } from '../engine/context-fold.js';
import type {
  FoldInput,
  FoldResult,
  HydrateResult,
  Page,
  RecallCandidate,
} from '../engine/types.js';
import { packageJson } from '../fs/package-root.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import { ipcfErrorName, isContextFoldError, UsageError } from '../protocol/errors.js';
import { parsePolicy } from '../protocol/policy.js';
import { PROJECTION_VERSION } from '../protocol/types.js';
import {
  type OperationParams,
  type OperationResult,
  REQUIREMENT_IDS,
  SUBJECT_PROTOCOL,
  type Subject,
  type SubjectHello,
  type SubjectRequest,
  type SubjectResponse,
} from './types.js';

/**
 * The requirement set this subject declares: every IPCF-1.1 requirement. The declaration is
 * derived from this constant (PROTOCOL.md §6), so narrowing it is a code change with tests.
 */
export const LIBRARY_REQUIREMENTS: readonly string[] = REQUIREMENT_IDS;

/** Where {@link LIBRARY_REQUIREMENTS} lives, reported as `requirements_source`. */
export const LIBRARY_REQUIREMENTS_SOURCE =
  'constant LIBRARY_REQUIREMENTS in src/conformance/library-subject.ts';

/**
 * The stricter behaviours this runtime declares (PROTOCOL.md §5.2): an index `file_path` with a
 * `..` segment is refused even when it resolves to the canonical node (src/store/containment.ts),
 * where the floor of `conf-12--dotdot-inside-file-path` hydrates it. Declared, so its cost is
 * published with the cases it excused.
 */
export const LIBRARY_STRICTNESSES: readonly string[] = ['refuses_dotdot_in_file_path'];

/** Raised for a request the subject does not implement (PROTOCOL.md: `UnsupportedOperation`). */
class UnsupportedOperation extends Error {
  constructor(op: string) {
    super(`operation ${JSON.stringify(op)} is not supported`);
    this.name = 'UnsupportedOperation';
  }
}

function str(p: OperationParams, key: string): string {
  const v = p[key];
  if (typeof v !== 'string') throw new UsageError(`${key} must be a string`);
  return v;
}

function int(p: OperationParams, key: string, optional = false): number | undefined {
  const v = p[key];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v))
    throw new UsageError(`${key} must be an integer`);
  return v;
}

function strings(p: OperationParams, key: string): string[] | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string'))
    throw new UsageError(`${key} must be a list of strings`);
  return v as string[];
}

function b64(bytes: Uint8Array | string): string {
  return (typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes)).toString(
    'base64',
  );
}

/**
 * The in-process subject: the contextfold library behind the subject protocol. The turn
 * lifecycle (`page_in` / `end_turn` / `context_tokens`) is the minimal harness PROTOCOL.md §2
 * defines: pages from `engine.pageIn` stay resident until the turn ends, then each is evicted
 * with `engine.evict`. Methods are protected so that test mutants can break one behaviour each.
 *
 * @example
 * const subject = new LibrarySubject();
 * await subject.request({ id: 1, op: 'hello', protocol: 'ipcf-subject/1' });
 */
export class LibrarySubject implements Subject {
  /** The open store's directory and engine (kept so the subject can state what it serves). */
  protected state: { dir: string; engine: ContextFold } | null = null;
  /** Pages resident in the next model call: step id → tokens. */
  protected resident = new Map<number, number>();
  private residentDir: string | null = null;

  async request(req: SubjectRequest): Promise<SubjectResponse> {
    try {
      const result = await this.dispatch(req.op, req);
      return { id: req.id, ok: true, result };
    } catch (e) {
      if (isContextFoldError(e)) {
        return {
          id: req.id,
          ok: false,
          error: { name: ipcfErrorName(e.code), message: e.message },
        };
      }
      if (e instanceof UnsupportedOperation) {
        return {
          id: req.id,
          ok: false,
          error: { name: 'UnsupportedOperation', message: e.message },
        };
      }
      const message = e instanceof Error ? e.message : String(e);
      return { id: req.id, ok: false, error: { name: 'InternalError', message } };
    }
  }

  async close(): Promise<void> {
    if (this.state) await this.state.engine.close();
    this.state = null;
  }

  protected engine(): ContextFold {
    if (!this.state) throw new UsageError('no store is open: send open first');
    return this.state.engine;
  }

  /** Each operation of the subject protocol, and the method that answers it. */
  readonly #operations: Readonly<Record<string, (p: OperationParams) => Promise<OperationResult>>> =
    {
      hello: () => this.hello(),
      open: (p) => this.open(p),
      close: () => this.closeStore(),
      fold: (p) => this.fold(p),
      fold_batch: (p) => this.foldBatch(p),
      recall: (p) => this.recall(p),
      scan: (p) => this.scan(p),
      hydrate: (p) => this.hydrate(p),
      evict: (p) => this.evict(p),
      page_in: (p) => this.pageIn(p),
      end_turn: () => this.endTurn(),
      context_tokens: () => this.contextTokens(),
      validate: () => this.validate(),
      compact: () => this.compact(),
    };

  protected dispatch(op: string, p: OperationParams): Promise<OperationResult> {
    if (!Object.hasOwn(this.#operations, op)) throw new UnsupportedOperation(op);
    return this.#operations[op]!(p);
  }

  protected async hello(): Promise<OperationResult> {
    const hello: SubjectHello = {
      protocol: SUBJECT_PROTOCOL,
      runtime: { name: 'contextfold', version: packageJson().version },
      requirements: [...LIBRARY_REQUIREMENTS],
      strictnesses: [...LIBRARY_STRICTNESSES],
      requirements_source: LIBRARY_REQUIREMENTS_SOURCE,
    };
    return hello as unknown as OperationResult;
  }

  protected async open(p: OperationParams): Promise<OperationResult> {
    if (this.state) await this.closeStore();
    const dir = str(p, 'dir');
    if (!isAbsolute(dir)) throw new UsageError('dir must be an absolute path');
    const tokenizer = p.tokenizer ?? 'reference';
    if (tokenizer !== 'reference' && tokenizer !== 'o200k') {
      throw new UsageError(
        `tokenizer must be 'reference' or 'o200k', got ${JSON.stringify(tokenizer)}`,
      );
    }
    const clock = p.clock === undefined || p.clock === null ? undefined : str(p, 'clock');
    const at = clock === undefined ? undefined : new Date(clock);
    if (at && Number.isNaN(at.getTime()))
      throw new UsageError(`clock is not a timestamp: ${clock}`);
    const engine = await ContextFold.open({
      store: await this.storeOf(dir, at),
      // The corpus pins the IPCF reference software MMU (RGSC), not our ranked default.
      retrieval: 'reference',
      policy:
        p.policy === undefined || p.policy === null
          ? undefined
          : parsePolicy(p.policy, 'open.policy'),
      tokenizer,
      sessionId:
        p.session_id === undefined || p.session_id === null ? undefined : str(p, 'session_id'),
      clock: at ? () => new Date(at.getTime()) : undefined,
    });
    this.state = { dir, engine };
    // The prompt belongs to the session, not to one open: reopening the same store keeps it.
    if (this.residentDir !== dir) this.resident.clear();
    this.residentDir = dir;
    return {};
  }

  /**
   * Where the engine finds the store of directory `dir`: the directory itself; a subject on
   * another backend loads the directory there (see `PgMirrorSubject`).
   */
  protected async storeOf(dir: string, _clock?: Date): Promise<string> {
    return dir;
  }

  /** Before the engine closes: a subject on another backend writes its state back to `dir`. */
  protected async beforeClose(_dir: string, _engine: ContextFold): Promise<void> {}

  protected async closeStore(): Promise<OperationResult> {
    if (this.state) {
      try {
        await this.beforeClose(this.state.dir, this.state.engine);
      } finally {
        await this.state.engine.close();
      }
    }
    this.state = null;
    return {};
  }

  protected foldInput(p: OperationParams): FoldInput {
    const content = p.content_base64;
    if (content !== undefined && typeof content !== 'string')
      throw new UsageError('content_base64 must be a string');
    return {
      stepId: int(p, 'step_id')!,
      summary: str(p, 'summary'),
      content: content === undefined ? undefined : new Uint8Array(Buffer.from(content, 'base64')),
      files: strings(p, 'files'),
      commands: strings(p, 'commands'),
      errors: strings(p, 'errors'),
    };
  }

  protected foldResult(r: FoldResult): OperationResult {
    return {
      step_id: r.step_id,
      projection_version: PROJECTION_VERSION,
      payload_sha256: r.payload_sha256,
      projection_sha256: r.projection_sha256,
      artifact_sha256: r.artifact_sha256,
      identifiers: r.identifiers,
      files: r.files,
      commands: r.commands,
      errors: r.errors,
      token_estimate: r.token_estimate,
      folded_at: r.folded_at,
      already_folded: r.already_folded,
    };
  }

  protected async fold(p: OperationParams): Promise<OperationResult> {
    return this.foldResult(await this.engine().fold(this.foldInput(p)));
  }

  protected async foldBatch(p: OperationParams): Promise<OperationResult> {
    if (!Array.isArray(p.turns)) throw new UsageError('turns must be a list of fold requests');
    const inputs = (p.turns as OperationParams[]).map((t) => this.foldInput(t));
    const results = await this.engine().foldMany(inputs);
    return { results: results.map((r) => this.foldResult(r)) };
  }

  protected async recall(p: OperationParams): Promise<OperationResult> {
    const r = await this.engine().recall(str(p, 'query'), { limit: int(p, 'limit', true) });
    return {
      query: r.query,
      candidates: r.candidates.map((c: RecallCandidate) => ({
        step_id: c.step_id,
        status: c.status,
        coverage: c.coverage,
        score: c.score,
      })),
    };
  }

  protected async scan(p: OperationParams): Promise<OperationResult> {
    const r = await this.engine().scan(str(p, 'prompt'), { mode: 'reference' });
    return { query_terms: r.query_terms, selected: r.selected, budget_dropped: r.budget_dropped };
  }

  /** Exact bytes of a hydrated chunk: the whole verified payload when it came in one piece. */
  protected async chunkBytes(step: number, h: HydrateResult): Promise<Buffer> {
    if (h.chunks === 1 && !h.truncated) return Buffer.from(await this.engine().hydrateBytes(step));
    return Buffer.from(h.content, 'utf8');
  }

  protected async hydrate(p: OperationParams): Promise<OperationResult> {
    const step = int(p, 'step_id')!;
    const h = await this.engine().hydrate(step, {
      chunk: int(p, 'chunk', true),
      maxTokens: int(p, 'max_tokens', true),
    });
    return {
      step_id: h.step_id,
      content_base64: b64(await this.chunkBytes(step, h)),
      payload_sha256: h.payload_sha256,
      chunk: h.chunk,
      chunks: h.chunks,
      truncated: h.truncated,
      tokens: h.tokens,
    };
  }

  protected async evict(p: OperationParams): Promise<OperationResult> {
    const step = int(p, 'step_id')!;
    await this.engine().evict(step);
    this.resident.delete(step);
    return { step_id: step };
  }

  protected pageResult(pg: Page): OperationResult {
    return {
      step_id: pg.step_id,
      payload_sha256: pg.payload_sha256,
      matched_terms: pg.matched_terms,
      tokens: pg.tokens,
      chunk: pg.chunk,
      chunks: pg.chunks,
      truncated: pg.truncated,
      content_base64: b64(pg.content),
    };
  }

  protected async pageIn(p: OperationParams): Promise<OperationResult> {
    const r = await this.engine().pageIn(str(p, 'prompt'), { mode: 'reference' });
    for (const pg of r.pages) this.resident.set(pg.step_id, pg.tokens);
    return {
      pages: r.pages.map((pg) => this.pageResult(pg)),
      refused: r.failures.map((f) => ({ step_id: f.step_id, error: f.error })),
      tokens: r.tokens,
    };
  }

  /** The response arrived: every resident page leaves the prompt and is recorded as evicted. */
  protected async endTurn(): Promise<OperationResult> {
    const steps = [...this.resident.keys()].sort((a, b) => a - b);
    for (const s of steps) {
      await this.engine().evict(s);
      this.resident.delete(s);
    }
    return { evicted: steps };
  }

  protected async contextTokens(): Promise<OperationResult> {
    let tokens = 0;
    for (const t of this.resident.values()) tokens += t;
    return { tokens, resident: [...this.resident.keys()].sort((a, b) => a - b) };
  }

  /** A path as PROTOCOL.md wants it: relative to the store directory, with `/`. */
  protected storePath(path: string): string {
    const dir = this.state!.dir;
    if (isAbsolute(path)) {
      const rel = relative(dir, path);
      return rel.startsWith('..') || isAbsolute(rel) ? path : rel.split(sep).join('/');
    }
    const prefix = `${dir.split(sep).pop()}/`;
    return path.startsWith(prefix) ? path.slice(prefix.length) : path;
  }

  protected async validate(): Promise<OperationResult> {
    const r = await this.engine().validate();
    const name = {
      orphaned_node: 'OrphanedNodeError',
      broken_reference: 'BrokenReferenceError',
      integrity: 'IntegrityCheckError',
      path_containment: 'PathContainmentError',
      journal: 'IntegrityCheckError',
      index: 'IntegrityCheckError',
    } as const;
    const problems = r.problems
      .map((pr) => ({
        error: name[pr.kind],
        step_id: pr.step_id,
        path: this.storePath(pr.path),
        message: pr.message,
      }))
      .sort((a, b) => compareCodePoints(a.path, b.path) || compareCodePoints(a.error, b.error));
    return { ok: r.ok, problems };
  }

  protected async compact(): Promise<OperationResult> {
    await this.engine().compact();
    return {};
  }
}
