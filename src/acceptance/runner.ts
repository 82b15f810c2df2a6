import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { UsageError } from '../protocol/errors.js';
import { type AnchorContext, type AnchorState, checkAnchor } from './anchors.js';
import { DEFAULT_CASE_FILE, type LoadedCaseFile, loadCaseFile } from './case-file.js';
import type { AcceptanceCase } from './case-schema.js';
import { type CallResult, deriveCall, parsePages } from './observe.js';
import {
  compareCall,
  compareStore,
  type FloorOutcome,
  type ScoredCase,
  type StoreResult,
  scoreRun,
} from './score.js';
import { applyStoreActions } from './store-actions.js';
import { SetupError, snapshotStores } from './store-snapshot.js';
import type { AdapterSubject, SubjectCase } from './subject.js';

/** Options of {@link runAdapterAcceptance}. */
export interface AcceptanceOptions {
  subjects: readonly AdapterSubject[];
  /** The case file. Default: the one shipped with this package. */
  caseFile?: string;
  /** A profile of the case file. Default `normative` (every case). */
  profile?: string;
  /** Run only these cases (in file order). Default: every case of the profile. */
  cases?: readonly string[];
  /** Where the specification texts are, to check `spec` anchors (else they are unchecked). */
  specDir?: string | null;
  /** Where per-case work directories are made. Default: the OS temp dir. */
  tmpDir?: string;
  /**
   * Cases of one subject run at the same time (each in its own directory). Default 2: the
   * process subjects spend most of a case starting Node.
   */
  concurrency?: number;
  /** Progress: called before each case of each subject. */
  onCase?: (adapter: string, caseId: string, index: number, total: number) => void;
}

/** One subject's run: what it declares and every case's verdict. */
export interface AdapterRun {
  adapter: string;
  entry_point: string;
  declared_requirements: string[];
  requirements_source: string;
  cases: ScoredCase[];
  /** The derived results, by case id (for reports and tests). */
  results: Map<string, CallResult[]>;
}

/** Everything a run produced. */
export interface AcceptanceReport {
  suite: { name: string; version: string; content_sha256: string; case_count: number };
  contract: string;
  profile: string;
  /** The state of every source anchor of the run's cases. */
  anchors: { case_id: string; state: AnchorState['state']; reason: string }[];
  adapters: AdapterRun[];
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, ' ').trim();

/** Files under the roots that contain any of the texts (symlinks are not followed). */
function leaks(roots: readonly string[], texts: readonly string[]): StoreResult['leaked'] {
  const found: StoreResult['leaked'] = [];
  const pending = new Set(texts);
  const walk = (root: string, dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(root, p);
      else if (st.isFile()) {
        const bytes = readFileSync(p);
        for (const t of [...pending]) {
          if (bytes.includes(Buffer.from(t, 'utf8'))) {
            found.push({ text: t, file: relative(root, p) });
            pending.delete(t);
          }
        }
      }
    }
  };
  for (const r of roots) walk(r, r);
  return found;
}

/** Runs one case against an open subject case: setup, snapshot, store actions, calls, store checks. */
async function drive(c: AcceptanceCase, sc: SubjectCase, workDir: string) {
  if (c.input.policy) {
    for (const s of Object.keys(c.input.sessions)) {
      mkdirSync(sc.storeDir(s), { recursive: true });
      writeFileSync(join(sc.storeDir(s), 'hydration_policy.json'), JSON.stringify(c.input.policy));
    }
  }
  for (const w of await sc.setup()) {
    if (!w.proceeded) throw new SetupError(`the warm-up call did not proceed: ${w.error ?? ''}`);
    if (parsePages(w.modelInput).length > 0)
      throw new SetupError('the warm-up call paged something in: the case history is ambiguous');
  }
  const storeDir = (s: string) => sc.storeDir(s);
  const snapshot = await snapshotStores(c.input, storeDir);
  const effects = await applyStoreActions(c.input.store, { workDir, storeDir, snapshot });
  const results: CallResult[] = [];
  for (const k of c.input.calls) {
    const obs = await sc.call(k.session, k.prompt);
    results.push(deriveCall(obs, k.session, snapshot, results.at(-1) ?? null));
  }
  return { results, effects };
}

async function runCase(subject: AdapterSubject, c: AcceptanceCase, tmp: string) {
  const workDir = mkdtempSync(join(tmp, 'cf-acc-'));
  let sc: SubjectCase | null = null;
  try {
    sc = await subject.open({ workDir, input: c.input });
    const roots = [...sc.writeRoots];
    const { results, effects } = await drive(c, sc, workDir);
    await sc.close();
    sc = null;
    const store: StoreResult = {
      leaked: leaks(roots, c.expect.store?.excludes ?? []),
      repaired: [],
    };
    for (const e of effects) if ((await e.read()) !== e.expected) store.repaired.push(e.describe);
    const deviations = [
      ...c.expect.calls.flatMap((e, i) => compareCall(e, results[i]!, i)),
      ...compareStore(c.expect.store, store),
    ];
    return { settled: null, deviations, results };
  } catch (e) {
    const why = e instanceof SetupError ? `setup: ${e.message}` : `runner: ${(e as Error).message}`;
    return {
      settled: { verdict: 'error' as const, reason: oneLine(why) },
      deviations: [],
      results: [],
    };
  } finally {
    await sc?.close().catch(() => undefined);
    rmSync(workDir, { recursive: true, force: true });
  }
}

async function runSubject(
  subject: AdapterSubject,
  cases: readonly AcceptanceCase[],
  anchors: Map<string, string | null>,
  options: AcceptanceOptions,
): Promise<AdapterRun> {
  const unavailable = await subject.unavailable();
  const declared = new Set(subject.acceptance.requirements);
  const outcomes: FloorOutcome[] = new Array(cases.length);
  const results = new Map<string, CallResult[]>();
  const one = async (i: number): Promise<FloorOutcome> => {
    const c = cases[i]!;
    options.onCase?.(subject.name, c.id, i, cases.length);
    const base = { doc: c, deviations: [], declared: [] as string[] };
    const outside = c.requirements.filter((r) => !declared.has(r));
    const broken = anchors.get(c.id);
    if (unavailable) return { ...base, settled: { verdict: 'error', reason: unavailable } };
    if (outside.length > 0) {
      const reason = `requires ${outside.join(', ')}, outside the declared set`;
      return { ...base, settled: { verdict: 'not-applicable', reason } };
    }
    if (broken)
      return { ...base, settled: null, deviations: [{ direction: 'go', message: broken }] };
    const r = await runCase(subject, c, options.tmpDir ?? tmpdir());
    results.set(c.id, r.results);
    return {
      ...base,
      settled: r.settled,
      deviations: r.deviations,
      declared: subject.declare(c.input),
    };
  };
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      outcomes[i] = await one(i);
    }
  };
  const n = Math.max(1, Math.min(options.concurrency ?? 2, cases.length));
  await Promise.all(Array.from({ length: n }, worker));
  return {
    adapter: subject.name,
    entry_point: subject.entryPoint,
    declared_requirements: [...declared].sort(),
    requirements_source: subject.acceptance.source,
    cases: scoreRun(outcomes),
    results,
  };
}

function selectCases(loaded: LoadedCaseFile, options: AcceptanceOptions): AcceptanceCase[] {
  const profile = options.profile ?? 'normative';
  if (!(profile in loaded.file.profiles)) {
    throw new UsageError(
      `unknown profile ${JSON.stringify(profile)}: use one of ${Object.keys(loaded.file.profiles).join(', ')}`,
    );
  }
  let cases = loaded.file.cases.filter((c) => c.profiles.includes(profile));
  if (options.cases) {
    const known = new Set(cases.map((c) => c.id));
    const unknown = options.cases.find((id) => !known.has(id));
    if (unknown) throw new UsageError(`no case ${unknown} in profile ${profile}`);
    const keep = new Set(options.cases);
    cases = cases.filter((c) => keep.has(c.id));
  }
  return cases;
}

/**
 * Runs every subject over the adapter acceptance cases (contract 003): each case in a fresh
 * directory, through the integration's own entry point; its source anchors checked first (a
 * broken anchor fails the case); then scored with the safety / liveness rules, declarations
 * weighed against the absence cases of the same run. Subjects run concurrently, cases of one
 * subject in order.
 *
 * @example
 * const report = await runAdapterAcceptance({ subjects: defaultSubjects() });
 * buildAdapterDeclaration(report).adapters.map((a) => a.counts);
 */
export async function runAdapterAcceptance(options: AcceptanceOptions): Promise<AcceptanceReport> {
  const loaded = loadCaseFile(options.caseFile ?? DEFAULT_CASE_FILE);
  const cases = selectCases(loaded, options);
  const ctx: AnchorContext = { specDir: options.specDir ?? null };
  const anchorStates: AcceptanceReport['anchors'] = [];
  const broken = new Map<string, string | null>();
  for (const c of cases) {
    let why: string | null = null;
    for (const a of c.source) {
      const s = checkAnchor(a, ctx);
      anchorStates.push({
        case_id: c.id,
        state: s.state,
        reason: s.state === 'holds' ? '' : s.reason,
      });
      if (s.state === 'broken') why ??= `source anchor no longer holds: ${s.reason}`;
    }
    broken.set(c.id, why);
  }
  const adapters = await Promise.all(
    options.subjects.map((s) => runSubject(s, cases, broken, options)),
  );
  return {
    suite: {
      name: loaded.file.suite,
      version: loaded.file.version,
      content_sha256: loaded.content_sha256,
      case_count: loaded.file.cases.length,
    },
    contract: loaded.file.contract,
    profile: options.profile ?? 'normative',
    anchors: anchorStates,
    adapters,
  };
}
