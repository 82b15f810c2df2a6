import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { referenceTokenizer } from '../extract/tokenizer.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import { setOwnEntry } from '../protocol/own-entry.js';
import { makeTempDir } from '../store/temp-dir.js';
import { type Corpus, openCorpus } from './corpus.js';
import { applyFsAction, FsActionError } from './fs-actions.js';
import { match, pluck } from './matcher.js';
import { SubjectProtocolError } from './process-subject.js';
import {
  type CaseDoc,
  type CaseOutcome,
  type Manifest,
  REQUIREMENT_IDS,
  type RunReport,
  type ScriptStep,
  SUBJECT_PROTOCOL,
  type Subject,
  type SubjectHello,
  type SubjectResponse,
} from './types.js';

/** The clock a store is opened with when the case names none. */
export const DEFAULT_CASE_CLOCK = '2026-01-01T00:00:00Z';

/** Options of {@link runConformance}. */
export interface RunOptions {
  subject: Subject;
  /** The corpus directory. Default: the corpus shipped with this package. */
  corpusDir?: string;
  /** A profile of the manifest. Default `full`. */
  profile?: string;
  /** Called after each case (progress output). */
  onCase?: (outcome: CaseOutcome, index: number, total: number) => void;
  /** Where per-case temporary directories are made. Default: the OS temp dir. */
  tmpDir?: string;
}

/** The case could not be run (corpus, input, filesystem or subject-protocol problem). */
class CaseError extends Error {}

/** The subject's behaviour deviated from the case at a step. */
class CaseFailure extends Error {
  constructor(
    message: string,
    readonly step: number,
    /** Set when the case expected the step to proceed and the subject refused with this error. */
    readonly refusedWith: string | null,
  ) {
    super(message);
  }
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ').trim();

/**
 * `PathContainmentError` is a kind of `IntegrityCheckError` (PROTOCOL.md §1.1); `*` is any
 * refusal (§4.1: the specification requires a failure without naming its error).
 */
function errorMatches(expected: string, actual: string): boolean {
  return (
    expected === '*' ||
    expected === actual ||
    (expected === 'IntegrityCheckError' && actual === 'PathContainmentError')
  );
}

const referenceTokens = referenceTokenizer.count;

const lossy = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Adds the runner-derived fields (PROTOCOL.md §4.2) to every object carrying `content_base64`. */
function derive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(derive);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) setOwnEntry(out, k, derive(v));
  const c = out.content_base64;
  if (typeof c === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(c) && c.length % 4 === 0) {
    const bytes = Buffer.from(c, 'base64');
    out.content_sha256 = sha256Hex(bytes);
    out.content_bytes = bytes.length;
    out.content_tokens = referenceTokens(lossy.decode(bytes));
  }
  return out;
}

interface OpenParams {
  store: string;
  dir: string;
  request: Record<string, unknown>;
}

/** Runs one case against the subject. */
class CaseRun {
  private readonly saved = new Map<string, unknown>();
  private readonly turnFiles = new Map<string, Record<string, unknown>[]>();
  private current: OpenParams | null = null;
  private isOpen = false;

  constructor(
    private readonly doc: CaseDoc,
    private readonly inputs: Map<string, Buffer>,
    private readonly root: string,
    private readonly send: (
      op: string,
      params: Record<string, unknown>,
    ) => Promise<SubjectResponse>,
  ) {}

  async run(): Promise<void> {
    try {
      for (let i = 0; i < this.doc.script.length; i++) await this.step(this.doc.script[i]!, i);
    } finally {
      if (this.isOpen) {
        this.isOpen = false;
        await this.send('close', {}).catch(() => undefined);
      }
    }
  }

  private input(name: unknown, what: string): Buffer {
    const b = typeof name === 'string' ? this.inputs.get(name) : undefined;
    if (!b) throw new CaseError(`${what} names unknown input ${JSON.stringify(name)}`);
    return b;
  }

  private text(name: unknown, what: string): string {
    try {
      return strict.decode(this.input(name, what));
    } catch (e) {
      if (e instanceof CaseError) throw e;
      throw new CaseError(`${what} input ${String(name)} is not valid UTF-8`);
    }
  }

  private turns(name: unknown): Record<string, unknown>[] {
    const key = String(name);
    let turns = this.turnFiles.get(key);
    if (!turns) {
      turns = [];
      for (const line of this.text(name, 'turns').split('\n')) {
        if (line.trim() === '') continue;
        let t: unknown;
        try {
          t = JSON.parse(line);
        } catch {
          throw new CaseError(`turns file ${key} holds a line that is not JSON`);
        }
        const turn = t as Record<string, unknown>;
        if (!Number.isSafeInteger(turn.step_id) || typeof turn.summary !== 'string') {
          throw new CaseError(
            `turns file ${key}: every line needs an integer step_id and a summary`,
          );
        }
        turns.push(turn);
      }
      this.turnFiles.set(key, turns);
    }
    return turns;
  }

  /** A turn line as a fold request: raw_content (text) or raw_content_file (bytes) → base64. */
  private foldRequest(turn: Record<string, unknown>): Record<string, unknown> {
    const req: Record<string, unknown> = { step_id: turn.step_id, summary: turn.summary };
    if (typeof turn.raw_content === 'string')
      req.content_base64 = Buffer.from(turn.raw_content, 'utf8').toString('base64');
    else if (turn.raw_content_file !== undefined)
      req.content_base64 = this.input(turn.raw_content_file, 'raw_content_file').toString('base64');
    for (const k of ['files', 'commands', 'errors']) if (turn[k] !== undefined) req[k] = turn[k];
    return req;
  }

  private pickTurn(step: ScriptStep, id: unknown): Record<string, unknown> {
    const found = this.turns(step.turns).filter((t) => t.step_id === id);
    if (found.length !== 1)
      throw new CaseError(
        `turns file ${String(step.turns)} has ${found.length} line(s) for step ${String(id)}`,
      );
    return found[0]!;
  }

  private request(step: ScriptStep): Record<string, unknown> {
    switch (step.op) {
      case 'fold':
        return this.foldRequest(this.pickTurn(step, step.step_id));
      case 'fold_batch': {
        const ids = step.step_ids as unknown[] | undefined;
        const turns = ids ? ids.map((id) => this.pickTurn(step, id)) : this.turns(step.turns);
        return { turns: turns.map((t) => this.foldRequest(t)) };
      }
      case 'recall':
        return {
          query: this.text(step.query, 'query'),
          ...(step.limit !== undefined ? { limit: step.limit } : {}),
        };
      case 'scan':
      case 'page_in':
        return { prompt: this.text(step.prompt, 'prompt') };
      case 'hydrate': {
        const r: Record<string, unknown> = { step_id: step.step_id };
        if (step.chunk !== undefined) r.chunk = step.chunk;
        if (step.max_tokens !== undefined) r.max_tokens = step.max_tokens;
        return r;
      }
      case 'evict':
        return { step_id: step.step_id };
      case 'end_turn':
      case 'context_tokens':
      case 'validate':
      case 'compact':
        return {};
      default:
        throw new CaseError(`unknown operation ${JSON.stringify(step.op)} in the case script`);
    }
  }

  private async call(op: string, params: Record<string, unknown>): Promise<SubjectResponse> {
    const r = await this.send(op, params);
    if (!r.ok && r.error.name === 'UnsupportedOperation') {
      throw new CaseError(`subject does not support ${op}, which this case needs`);
    }
    return r;
  }

  private async open(step: ScriptStep, i: number): Promise<void> {
    if (this.isOpen) await this.closeStore(i);
    const store = typeof step.store === 'string' ? step.store : 'main';
    if (!/^[a-z0-9-]+$/.test(store) || store === 'outside')
      throw new CaseError(`bad store name ${store}`);
    mkdirSync(join(this.root, store), { recursive: true });
    const dir = join(this.root, store, '.contextfold');
    let policy: unknown = null;
    if (step.policy !== undefined) {
      const bytes = this.input(step.policy, 'policy');
      try {
        policy = JSON.parse(this.text(step.policy, 'policy'));
      } catch {
        throw new CaseError(`policy input ${String(step.policy)} is not JSON`);
      }
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'hydration_policy.json'), bytes);
    }
    const request = {
      dir,
      policy,
      tokenizer: 'reference',
      clock: typeof step.clock === 'string' ? step.clock : DEFAULT_CASE_CLOCK,
      session_id: typeof step.session_id === 'string' ? step.session_id : null,
    };
    this.current = { store, dir, request };
    await this.reopen(i, 'open');
  }

  private async reopen(i: number, why: string): Promise<void> {
    const r = await this.call('open', this.current!.request);
    if (!r.ok)
      throw new CaseFailure(
        `step ${i} (${why}): open was refused: ${r.error.name}: ${r.error.message}`,
        i,
        r.error.name,
      );
    this.isOpen = true;
  }

  private async closeStore(i: number): Promise<void> {
    this.isOpen = false;
    const r = await this.call('close', {});
    if (!r.ok)
      throw new CaseFailure(
        `step ${i} (close): ${r.error.name}: ${r.error.message}`,
        i,
        r.error.name,
      );
  }

  private async fsAction(step: ScriptStep, i: number): Promise<void> {
    const wasOpen = this.isOpen;
    if (wasOpen) {
      // Let a journaling runtime write the whole page table into recall_index.json first.
      await this.send('compact', {});
      await this.closeStore(i);
    }
    const storeDir = this.current?.dir ?? join(this.root, 'main', '.contextfold');
    try {
      applyFsAction(step, { root: this.root, storeDir, inputs: this.inputs });
    } catch (e) {
      if (e instanceof FsActionError) throw new CaseError(`step ${i} (${step.fs}): ${e.message}`);
      throw new CaseError(`step ${i} (${step.fs}): ${(e as Error).message}`);
    }
    if (wasOpen) await this.reopen(i, `reopen after ${step.fs}`);
  }

  /** `hydrate_all`: every chunk of a step, concatenated, with the reassembly verdict. */
  private async hydrateAll(step: ScriptStep): Promise<SubjectResponse> {
    const base: Record<string, unknown> = { step_id: step.step_id };
    if (step.max_tokens !== undefined) base.max_tokens = step.max_tokens;
    const first = await this.call('hydrate', base);
    if (!first.ok) return first;
    const chunks = first.result.chunks;
    if (!Number.isSafeInteger(chunks) || (chunks as number) < 1 || (chunks as number) > 100_000) {
      return { ...first, result: { ...first.result, reassembly: 'mismatch' } };
    }
    const parts: Buffer[] = [];
    let maxTokens = 0;
    for (let k = 0; k < (chunks as number); k++) {
      const r = k === 0 ? first : await this.call('hydrate', { ...base, chunk: k });
      if (!r.ok) return r;
      const c = r.result.content_base64;
      if (typeof c !== 'string')
        return { ...first, result: { ...first.result, reassembly: 'mismatch' } };
      const bytes = Buffer.from(c, 'base64');
      parts.push(bytes);
      maxTokens = Math.max(maxTokens, referenceTokens(lossy.decode(bytes)));
    }
    const whole = Buffer.concat(parts);
    const payload = this.input(step.payload, 'payload');
    let reassembly = 'mismatch';
    if (whole.equals(payload)) reassembly = 'exact';
    else if (
      chunks === 1 &&
      first.result.truncated === true &&
      whole.length > 0 &&
      payload.subarray(0, whole.length).equals(whole)
    ) {
      reassembly = 'prefix';
    }
    return {
      id: first.id,
      ok: true,
      result: {
        step_id: first.result.step_id,
        chunks,
        truncated: first.result.truncated,
        content_base64: whole.toString('base64'),
        max_chunk_tokens: maxTokens,
        reassembly,
      },
    };
  }

  private async step(step: ScriptStep, i: number): Promise<void> {
    if (step.fs !== undefined) return this.fsAction(step, i);
    if (step.op === 'open') return this.open(step, i);
    if (step.op === 'close') return this.closeStore(i);
    if (!this.isOpen) throw new CaseError(`step ${i} (${step.op}) runs with no store open`);
    const op = step.op!;
    const resp =
      op === 'hydrate_all' ? await this.hydrateAll(step) : await this.call(op, this.request(step));
    const label = `step ${i} (${op}${step.step_id !== undefined ? ` ${String(step.step_id)}` : ''})`;
    const expect = step.expect;
    if (expect && 'any' in expect) return;
    if (expect && 'error' in expect) {
      if (resp.ok)
        throw new CaseFailure(
          `${label}: expected ${expect.error === '*' ? 'a refusal' : expect.error}, got a result`,
          i,
          null,
        );
      if (!errorMatches(expect.error, resp.error.name)) {
        throw new CaseFailure(
          `${label}: expected ${expect.error}, got ${resp.error.name}: ${resp.error.message}`,
          i,
          null,
        );
      }
      return;
    }
    if (!resp.ok) {
      throw new CaseFailure(
        `${label}: expected a result, got ${resp.error.name}: ${resp.error.message}`,
        i,
        resp.error.name,
      );
    }
    const actual = derive(resp.result);
    if (expect && 'result' in expect) {
      let why: string | null;
      try {
        why = match(expect.result, actual, { inputs: this.inputs, saved: this.saved });
      } catch (e) {
        throw new CaseError(`${label}: malformed expectation: ${(e as Error).message}`);
      }
      if (why) throw new CaseFailure(`${label}: ${why}`, i, null);
    }
    for (const [name, path] of Object.entries(step.save ?? {})) {
      const v = pluck(actual, path);
      if (v === undefined)
        throw new CaseFailure(`${label}: result has no ${path} to save`, i, null);
      this.saved.set(name, v);
    }
  }
}

interface Pending {
  outcome: CaseOutcome;
  doc: CaseDoc | null;
  refused: { step: number; error: string } | null;
}

/** Reads the subject's `hello`, refusing a subject that speaks another protocol. */
async function hello(subject: Subject): Promise<SubjectHello> {
  let r: SubjectResponse;
  try {
    r = await subject.request({ id: 0, op: 'hello', protocol: SUBJECT_PROTOCOL });
  } catch (e) {
    throw new UsageError(`the subject did not answer hello: ${(e as Error).message}`);
  }
  if (!r.ok) throw new UsageError(`the subject refused hello: ${r.error.name}: ${r.error.message}`);
  const h = r.result as unknown as SubjectHello;
  if (h.protocol !== SUBJECT_PROTOCOL) {
    throw new UsageError(
      `the subject speaks ${JSON.stringify(h.protocol)}, this runner ${SUBJECT_PROTOCOL}`,
    );
  }
  const names = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === 'string');
  if (
    !h.runtime?.name ||
    typeof h.runtime.name !== 'string' ||
    !h.runtime.version ||
    typeof h.runtime.version !== 'string'
  ) {
    throw new UsageError(
      'the subject hello lacks runtime.name / runtime.version (non-empty strings)',
    );
  }
  if (!names(h.requirements) || !names(h.strictnesses)) {
    throw new UsageError(
      'the subject hello needs requirements and strictnesses as lists of strings',
    );
  }
  // Checked here, before any case runs, so that the published declaration is valid against
  // conformance/declaration.schema.json (not refused after the whole corpus ran).
  const known: readonly string[] = REQUIREMENT_IDS;
  const unknown = h.requirements.find((r) => !known.includes(r));
  if (unknown !== undefined) {
    throw new UsageError(
      `the subject hello declares requirement ${JSON.stringify(unknown)}: requirement ids are ${REQUIREMENT_IDS[0]} … ${REQUIREMENT_IDS.at(-1)}`,
    );
  }
  const badName = h.strictnesses.find((s) => !/^[a-z0-9_]+$/.test(s));
  if (badName !== undefined) {
    throw new UsageError(
      `the subject hello declares strictness ${JSON.stringify(badName)}: a conjunct name is lowercase letters, digits and _ (as the cases list it)`,
    );
  }
  if (h.requirements_source !== undefined && typeof h.requirements_source !== 'string') {
    throw new UsageError('the subject hello has a requirements_source that is not a string');
  }
  return h;
}

/** What {@link runCase} needs besides the case: the corpus, the subject and where to work. */
interface CaseSetting {
  corpus: Corpus;
  /** The requirements the subject declared: a case needing another is not applicable. */
  declared: ReadonlySet<string>;
  send: (op: string, params: Record<string, unknown>) => Promise<SubjectResponse>;
  tmpDir: string | undefined;
}

/**
 * Runs one case of the manifest in a fresh temporary directory and scores it; a refused step
 * is kept for {@link scoreStrictness}, which may excuse it once every case has run.
 */
async function runCase(entry: Manifest['cases'][number], setting: CaseSetting): Promise<Pending> {
  const { corpus, declared, send } = setting;
  const outcome: CaseOutcome = {
    case_id: entry.id,
    class: entry.class,
    requirements: entry.requirements,
    verdict: 'pass',
    reason: '',
  };
  let doc: CaseDoc | null = null;
  let refused: Pending['refused'] = null;
  const root = makeTempDir('cf-conf-', setting.tmpDir);
  try {
    doc = corpus.caseDoc(entry.id);
    if (
      JSON.stringify(doc.requirements) !== JSON.stringify(entry.requirements) ||
      doc.class !== entry.class
    ) {
      throw new CaseError('manifest and expected.json disagree on requirements or class');
    }
    const outside = doc.requirements.filter((r) => !declared.has(r));
    if (outside.length > 0) {
      outcome.verdict = 'not-applicable';
      outcome.reason = `requires ${outside.join(', ')}, outside the declared set`;
    } else {
      const inputs = corpus.caseInputs(doc);
      await new CaseRun(doc, inputs, root, send).run();
    }
  } catch (e) {
    refused = scoreThrown(e, outcome);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return { outcome, doc, refused };
}

/**
 * Scores a case that threw: a deviation fails it (returning the refused step, if any, for the
 * liveness rule); a case that could not be run, or a runner bug, is an error.
 */
function scoreThrown(e: unknown, outcome: CaseOutcome): Pending['refused'] {
  if (e instanceof CaseFailure) {
    outcome.verdict = 'fail';
    outcome.reason = oneLine(e.message);
    return e.refusedWith !== null ? { step: e.step, error: e.refusedWith } : null;
  }
  if (e instanceof CaseError || e instanceof UsageError || e instanceof SubjectProtocolError) {
    outcome.verdict = 'error';
    outcome.reason = oneLine(e.message);
  } else {
    outcome.verdict = 'error';
    outcome.reason = oneLine(`runner: ${(e as Error).message ?? String(e)}`);
  }
  return null;
}

/**
 * Runs every case of a profile against a subject, each in a fresh temporary directory, and
 * scores it (PROTOCOL.md §5): `pass`, `fail`, `not-applicable` (a requirement outside the
 * subject's declared set) or `error` (the case could not be run). Nothing is skipped. A liveness
 * case refused at an allowed step passes only if the subject declared that strictness and the
 * case's absence case passed on the floor in the same run.
 *
 * @example
 * const report = await runConformance({ subject: new LibrarySubject() });
 * buildDeclaration(report).counts; // { pass: …, fail: 0, not_applicable: 0, error: 0, total: … }
 */
export async function runConformance(options: RunOptions): Promise<RunReport> {
  const corpus = openCorpus(options.corpusDir);
  const { manifest } = corpus;
  const profileName = options.profile ?? 'full';
  const profile = manifest.profiles[profileName];
  if (!profile) {
    throw new UsageError(
      `unknown profile ${JSON.stringify(profileName)}: use one of ${Object.keys(manifest.profiles).join(', ')}`,
    );
  }
  const subject = options.subject;
  const h = await hello(subject);
  const declared = new Set(h.requirements);
  const entries = new Map(manifest.cases.map((c) => [c.id, c]));
  let nextId = 1;
  const send = (op: string, params: Record<string, unknown>) =>
    subject.request({ ...params, id: nextId++, op });

  const setting: CaseSetting = { corpus, declared, send, tmpDir: options.tmpDir };
  const pending: Pending[] = [];
  for (const [index, id] of profile.cases.entries()) {
    const scored = await runCase(entries.get(id)!, setting);
    pending.push(scored);
    options.onCase?.(scored.outcome, index, profile.cases.length);
  }

  scoreStrictness(pending, new Set(h.strictnesses));
  return {
    runtime: { name: h.runtime.name, version: h.runtime.version },
    corpus: {
      name: manifest.corpus,
      version: manifest.version,
      content_sha256: corpus.contentHash(),
      case_count: manifest.case_count,
    },
    profile: profileName,
    declared_requirements: [...declared].sort(),
    requirements_source: h.requirements_source ?? 'not stated by the subject',
    declared_strictnesses: [...new Set(h.strictnesses)].sort(),
    cases: pending.map((p) => p.outcome),
  };
}

/**
 * The liveness rule (PROTOCOL.md §5.2): a refused step of a liveness case is excused only by a
 * strictness the case lists for that step and error, that the subject declared, and whose
 * absence case passed without any excuse in this run. Anything else stays a `fail`.
 */
function scoreStrictness(pending: Pending[], declared: Set<string>): void {
  const byId = new Map(pending.map((p) => [p.outcome.case_id, p.outcome]));
  for (const p of pending) {
    if (p.outcome.verdict !== 'fail' || !p.refused || !p.doc || p.doc.class !== 'liveness')
      continue;
    const allowed = p.doc.strictness_allowed.filter(
      (a) => a.step === p.refused!.step && a.errors.includes(p.refused!.error),
    );
    const claimed = allowed.filter((a) => declared.has(a.conjunct));
    if (claimed.length === 0) {
      if (allowed.length > 0)
        p.outcome.reason += ` (a stricter runtime must declare ${allowed.map((a) => a.conjunct).join(' or ')})`;
      continue;
    }
    const shown = claimed.find((a) => {
      const absent = byId.get(a.absence_case_id);
      return absent?.verdict === 'pass' && absent.strictness === undefined;
    });
    if (!shown) {
      p.outcome.reason = oneLine(
        `declared strictness ${claimed.map((a) => a.conjunct).join(', ')} is undemonstrated: absence case ${claimed.map((a) => a.absence_case_id).join(', ')} did not pass; ${p.outcome.reason}`,
      );
      continue;
    }
    p.outcome.verdict = 'pass';
    p.outcome.strictness = shown.conjunct;
    p.outcome.reason = `stricter by declared ${shown.conjunct}`;
  }
}
