import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { packageJson } from '../fs/package-root.js';
import { compareCodePoints, sha256Hex } from '../protocol/canonical-json.js';
import {
  type Verdict,
  type VerdictCounts,
  verdictCounts,
  verdictKey,
} from '../protocol/verdict.js';
import {
  CORPUS_MANIFEST_VERSION,
  corpusContentHash,
  type ExpectedCase,
  expectedSchema,
  IMPLEMENTED_MATCH,
  loadCorpusManifest,
  NEGATIVE_FAMILY,
  patternIdOfCase,
  readCase,
} from './corpus.js';
import { Redactor } from './redactor.js';
import { PAGE_TABLE_KINDS, scanText } from './scan-page.js';
import { DECLARED_TABLES, DEFAULT_GUARD_DIR, type GuardTables, loadGuardTables } from './tables.js';

/** A case's verdict (002 §1, §1.1). */
export type GuardVerdict = Verdict;

/** One case's result, with a one-line reason when it did not pass. */
export interface GuardCaseResult {
  case_id: string;
  verdict: GuardVerdict;
  scope: string[];
  reason: string;
  expected: string[];
  /** In-scope pattern ids the runtime raised (empty for error and not-applicable). */
  actual: string[];
}

/** Options of {@link runGuardConformance}. */
export interface GuardConformanceOptions {
  /** Guard directory holding the tables and `conformance/`. Default: the shipped one. */
  guardDir?: string;
  /** Tables to scan with (mutation tests pass a table set with a pattern removed). */
  tables?: GuardTables;
  /** The declared table set. Default {@link DECLARED_TABLES}: what the runner accepts as scope. */
  declaredTables?: readonly string[];
  /** Runtime named in the declaration. */
  runtime?: { name: string; version: string };
}

/** What a run produced: the corpus identity, the declared set and every case's verdict. */
export interface GuardRunReport {
  runtime: { name: string; version: string };
  corpus: { name: string; version: string; content_sha256: string; case_count: number };
  declared_tables: string[];
  cases: GuardCaseResult[];
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** In-scope pattern ids a text raises: the page tables by scan, the secrets table by redaction. */
async function raised(
  text: string,
  scope: readonly string[],
  tables: GuardTables,
  redactor: Redactor,
): Promise<string[]> {
  const ids = new Set<string>();
  for (const f of scanText(text, tables, PAGE_TABLE_KINDS)) ids.add(f.pattern_id);
  for (const r of (await redactor.redactText(text)).redactions) {
    ids.add(r.pattern_id);
    for (const m of r.merged_pattern_ids ?? []) ids.add(m);
  }
  // Membership by lookup in the published tables, never by id prefix (002 §4).
  return [...ids]
    .filter((id) => scope.includes(tables.publishedIn.get(id) ?? ''))
    .sort(compareCodePoints);
}

/** Checks a case's form and integrity; returns the reason it cannot be run, or null. */
function caseProblem(
  caseId: string,
  e: ExpectedCase,
  input: Buffer | null,
  t: GuardTables,
): string | null {
  if (e.case_id !== caseId)
    return `expected.json case_id "${e.case_id}" differs from the directory name`;
  if (e.match !== IMPLEMENTED_MATCH)
    return `match "${e.match}" is not implemented (only ${IMPLEMENTED_MATCH}); refusing to degrade to a weaker comparison`;
  if (input === null) return 'input.txt is missing';
  if (input.length !== e.input.bytes)
    return `input.txt is ${input.length} bytes, expected.json records ${e.input.bytes}: the fixture was altered`;
  if (sha256Hex(input) !== e.input.sha256)
    return 'input.txt SHA-256 differs from expected.json: the fixture was altered';
  for (const f of e.findings) {
    const table = t.publishedIn.get(f.pattern_id);
    if (!table || !e.scope.includes(table))
      return `expected finding ${f.pattern_id} is not published in a scoped table`;
  }
  const named = patternIdOfCase(caseId);
  if (named.split(':')[0] === NEGATIVE_FAMILY) {
    if (e.findings.length > 0) return `a ${NEGATIVE_FAMILY} case expects no findings`;
  } else if (!t.publishedIn.has(named)) {
    return `case id names ${named}, which no table publishes`;
  }
  return null;
}

async function runCase(
  guardDir: string,
  caseId: string,
  tables: GuardTables,
  declared: readonly string[],
  redactor: Redactor,
): Promise<GuardCaseResult> {
  const raw = readCase(guardDir, caseId);
  const base = {
    case_id: caseId,
    scope: [] as string[],
    expected: [] as string[],
    actual: [] as string[],
  };
  const parsed = expectedSchema.safeParse(raw.expected);
  if (!parsed.success)
    return { ...base, verdict: 'error', reason: 'expected.json is missing or malformed' };
  const e = parsed.data;
  const expected = [...new Set(e.findings.map((f) => f.pattern_id))].sort(compareCodePoints);
  const withScope = { ...base, scope: [...e.scope], expected };
  if (e.scope.some((s) => !declared.includes(s))) {
    const outside = e.scope.filter((s) => !declared.includes(s)).join(', ');
    return {
      ...withScope,
      verdict: 'not-applicable',
      reason: `scope ${outside} is outside the declared table set`,
    };
  }
  const problem = caseProblem(caseId, e, raw.input, tables);
  if (problem) return { ...withScope, verdict: 'error', reason: problem };
  let text: string;
  try {
    text = utf8.decode(raw.input!);
  } catch {
    return { ...withScope, verdict: 'error', reason: 'input.txt is not valid UTF-8' };
  }
  const actual = await raised(text, e.scope, tables, redactor);
  const missing = expected.filter((id) => !actual.includes(id));
  const extra = actual.filter((id) => !expected.includes(id));
  if (missing.length === 0 && extra.length === 0)
    return { ...withScope, actual, verdict: 'pass', reason: '' };
  const parts = [];
  if (missing.length > 0) parts.push(`missing ${missing.join(', ')}`);
  if (extra.length > 0) parts.push(`unexpected ${extra.join(', ')}`);
  return { ...withScope, actual, verdict: 'fail', reason: parts.join('; ') };
}

/**
 * Runs every case of the guard corpus (002 form) and returns each verdict. Nothing is skipped:
 * a case that cannot be run (altered input, unknown `match`, malformed fixture) is an `error`,
 * a case scoped outside the declared table set is `not-applicable`.
 *
 * @example
 * const report = await runGuardConformance();
 * const decl = buildGuardDeclaration(report);
 */
export async function runGuardConformance(
  options: GuardConformanceOptions = {},
): Promise<GuardRunReport> {
  const guardDir = options.guardDir ?? DEFAULT_GUARD_DIR;
  const tables = options.tables ?? loadGuardTables(guardDir);
  const declared = [...(options.declaredTables ?? DECLARED_TABLES)].sort(compareCodePoints);
  const manifest = loadCorpusManifest(guardDir);
  const redactor = new Redactor({ tables });
  const cases: GuardCaseResult[] = [];
  for (const id of [...manifest.cases].sort(compareCodePoints)) {
    cases.push(await runCase(guardDir, id, tables, declared, redactor));
  }
  return {
    runtime: options.runtime ?? { name: 'contextfold', version: packageJson().version },
    corpus: {
      name: manifest.corpus,
      version: manifest.corpus_version,
      content_sha256: corpusContentHash(guardDir),
      case_count: manifest.case_count,
    },
    declared_tables: declared,
    cases,
  };
}

/** The published declaration (`schemas/guard-declaration.schema.json`). */
export interface GuardDeclaration {
  declaration_version: '1';
  corpus_format: typeof CORPUS_MANIFEST_VERSION;
  runtime: { name: string; version: string };
  corpus: GuardRunReport['corpus'];
  declared_tables: string[];
  declared_tables_source: string;
  match_implemented: string[];
  counts: VerdictCounts & { total: number };
  tables: Record<string, VerdictCounts>;
  non_passing: { case_id: string; verdict: Exclude<GuardVerdict, 'pass'>; reason: string }[];
}

/** Where the declared set comes from (002 §1.1 asks a runtime to say so). */
export const DECLARED_TABLES_SOURCE =
  'GUARD_TABLE_FILES in src/guard/tables.ts: the constant the loader reads and the runner accepts scopes from';

/**
 * Turns a run into the declaration: runtime, corpus version and content hash, the declared
 * table set and its source, the four verdict counts with their total, counts per scoped table,
 * and every case that did not pass with its reason. No timestamp: same run, same bytes.
 *
 * @example
 * const decl = buildGuardDeclaration(await runGuardConformance());
 * decl.non_passing; // [] when every case passes
 */
export function buildGuardDeclaration(report: GuardRunReport): GuardDeclaration {
  const counts = { ...verdictCounts(), total: report.cases.length };
  const tables: Record<string, VerdictCounts> = {};
  for (const c of report.cases) {
    counts[verdictKey(c.verdict)]++;
    for (const s of c.scope) {
      tables[s] ??= verdictCounts();
      tables[s][verdictKey(c.verdict)]++;
    }
  }
  return {
    declaration_version: '1',
    corpus_format: CORPUS_MANIFEST_VERSION,
    runtime: report.runtime,
    corpus: report.corpus,
    declared_tables: report.declared_tables,
    declared_tables_source: DECLARED_TABLES_SOURCE,
    match_implemented: [IMPLEMENTED_MATCH],
    counts,
    tables: Object.fromEntries(Object.entries(tables).sort(([a], [b]) => compareCodePoints(a, b))),
    non_passing: report.cases
      .filter((c) => c.verdict !== 'pass')
      .map((c) => ({
        case_id: c.case_id,
        verdict: c.verdict as Exclude<GuardVerdict, 'pass'>,
        reason: c.reason,
      })),
  };
}

/** Path of the declaration's JSON Schema inside the package. */
export const GUARD_DECLARATION_SCHEMA = join(
  DEFAULT_GUARD_DIR,
  '..',
  'schemas',
  'guard-declaration.schema.json',
);

/**
 * The invariants of a declaration that its JSON Schema cannot state: the counts sum to the
 * total, the total is the corpus case count, and `non_passing` lists exactly the cases that did
 * not pass. Returns the problems (empty when none); {@link validateGuardDeclaration} also
 * checks the shape against the published schema.
 *
 * @example
 * checkGuardDeclaration(buildGuardDeclaration(await runGuardConformance())); // []
 */
export function checkGuardDeclaration(d: GuardDeclaration): string[] {
  const c = d.counts;
  const problems: string[] = [];
  if (c.pass + c.fail + c.not_applicable + c.error !== c.total) {
    problems.push(
      `counts do not sum to total: ${c.pass}+${c.fail}+${c.not_applicable}+${c.error} != ${c.total}`,
    );
  }
  if (c.total !== d.corpus.case_count) {
    problems.push(`total ${c.total} differs from the corpus case count ${d.corpus.case_count}`);
  }
  if (d.non_passing.length !== c.total - c.pass) {
    problems.push(
      `non_passing lists ${d.non_passing.length} case(s), counts say ${c.total - c.pass}`,
    );
  }
  return problems;
}

let validator: ((v: unknown) => boolean) & { errors?: unknown } = null as never;

/**
 * Validates a declaration (ours or another runtime's) against the published JSON Schema
 * (`schemas/guard-declaration.schema.json`, draft 2020-12, strict), then checks the invariants
 * the schema cannot state. Returns the problems (empty when valid).
 *
 * @example
 * validateGuardDeclaration(JSON.parse(readFileSync('declaration.json', 'utf8'))); // []
 */
export function validateGuardDeclaration(decl: unknown): string[] {
  validator ??= new Ajv2020({ allErrors: true, strict: true }).compile(
    JSON.parse(readFileSync(GUARD_DECLARATION_SCHEMA, 'utf8')) as object,
  );
  if (!validator(decl)) {
    return ((validator.errors ?? []) as { instancePath: string; message?: string }[]).map(
      (e) => `${e.instancePath || '(root)'}: ${e.message}`,
    );
  }
  return checkGuardDeclaration(decl as GuardDeclaration);
}
