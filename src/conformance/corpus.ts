import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { z } from 'zod';
import { packagePath } from '../fs/package-root.js';
import { compareCodePoints, sha256Hex } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import { type CaseDoc, type Manifest, REQUIREMENT_IDS } from './types.js';

/** The corpus shipped with this package (`conformance/` at the package root). */
export const DEFAULT_CORPUS_DIR = packagePath('conformance') + sep;

/** Verdict counts of a run (or a class of cases): the four verdicts and their total. */
export const verdictCountsSchema = z
  .object({
    pass: z.number().int().nonnegative(),
    fail: z.number().int().nonnegative(),
    not_applicable: z.number().int().nonnegative(),
    error: z.number().int().nonnegative(),
    total: z.number().int().nonnegative(),
  })
  .strict();

const requirement = z.enum(REQUIREMENT_IDS);
const caseId = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*(?:--[a-z0-9]+(?:-[a-z0-9]+)*)?$/);
const fileName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+$/)
  .refine((s) => s !== 'expected.json' && !/^\.+$/.test(s));

const expectation = z.union([
  z.object({ error: z.string().min(1) }).strict(),
  z.object({ result: z.unknown() }).strict(),
  z.object({ any: z.literal(true) }).strict(),
]);

const scriptStep = z
  .object({
    op: z.string().min(1).optional(),
    fs: z.string().min(1).optional(),
    expect: expectation.optional(),
    save: z.record(z.string(), z.string()).optional(),
  })
  .loose()
  .refine(
    (s) => (s.op === undefined) !== (s.fs === undefined),
    'a step has exactly one of op / fs',
  );

/**
 * Evidence: the verdict a named runtime was measured with (PROTOCOL.md §4.1). Informative only:
 * the runner never compares against it.
 */
const observedVerdict = z
  .object({
    runtime: z.string().min(1),
    corpus_version: z.string().regex(/^\d+\.\d+\.\d+$/),
    verdict: z.enum(['pass', 'fail', 'not-applicable', 'error']),
    note: z.string().min(1),
  })
  .strict();

const caseDocSchema = z
  .object({
    case_id: caseId,
    title: z.string().min(1),
    description: z.string().min(1),
    requirements: z.array(requirement).min(1),
    class: z.enum(['safety', 'liveness']),
    tags: z.array(z.string()),
    provenance: z.string().min(1),
    strictness_allowed: z.array(
      z
        .object({
          conjunct: z.string().regex(/^[a-z0-9_]+$/),
          description: z.string().min(1),
          step: z.number().int().nonnegative(),
          errors: z.array(z.string().min(1)).min(1),
          absence_case_id: caseId,
        })
        .strict(),
    ),
    inputs: z.array(
      z
        .object({
          file: fileName,
          bytes: z.number().int().nonnegative(),
          sha256: z.string().regex(/^[0-9a-f]{64}$/),
        })
        .strict(),
    ),
    script: z.array(scriptStep).min(1),
    observed: z.array(observedVerdict).optional(),
  })
  .strict();

const idList = z.array(caseId);

const manifestSchema = z
  .object({
    corpus: z.string().min(1),
    version: z.string().regex(/^\d+\.\d+\.\d+$/),
    specification: z.string(),
    subject_protocol: z.string(),
    case_count: z.number().int().nonnegative(),
    changelog: z
      .array(
        z
          .object({
            version: z.string().regex(/^\d+\.\d+\.\d+$/),
            kind: z.enum(['major', 'minor', 'patch']),
            reason: z.string().min(1),
          })
          .strict(),
      )
      .optional(),
    observed: z
      .array(
        z
          .object({
            runtime: z.string().min(1),
            corpus_version: z.string().regex(/^\d+\.\d+\.\d+$/),
            profiles: z.record(z.string(), verdictCountsSchema),
            note: z.string().min(1),
          })
          .strict(),
      )
      .optional(),
    cases: z.array(
      z
        .object({
          id: caseId,
          requirements: z.array(requirement).min(1),
          class: z.enum(['safety', 'liveness']),
        })
        .strict(),
    ),
    requirements: z.record(z.string(), z.object({ title: z.string(), cases: idList }).strict()),
    named_tests: z.record(z.string(), idList),
    stress_scenarios: z.record(
      z.string(),
      z.object({ description: z.string(), cases: idList }).strict(),
    ),
    edge_cases: z.record(z.string(), z.object({ description: z.string(), cases: idList }).strict()),
    profiles: z.record(z.string(), z.object({ description: z.string(), cases: idList }).strict()),
  })
  .strict();

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`cannot read the ${what}: ${path}`, { path });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`the ${what} is not valid JSON: ${path}`, { path });
  }
}

function issue(e: z.ZodError): string {
  const i = e.issues[0];
  return `${i?.path.length ? i.path.join('.') : '(root)'}: ${i?.message}`;
}

/**
 * Reads and checks `manifest.json`: shape, case count, and that every profile and coverage list
 * names only listed cases. Throws a one-line {@link UsageError} if the corpus itself is broken.
 *
 * @example
 * const m = loadManifest(DEFAULT_CORPUS_DIR); m.profiles.full.cases.length; // every case
 */
export function loadManifest(corpusDir: string): Manifest {
  const path = join(corpusDir, 'manifest.json');
  const r = manifestSchema.safeParse(readJson(path, 'corpus manifest'));
  if (!r.success)
    throw new UsageError(`corpus manifest is malformed at ${issue(r.error)}: ${path}`, { path });
  const m = r.data as Manifest;
  if (m.case_count !== m.cases.length) {
    throw new UsageError(
      `corpus manifest says ${m.case_count} cases but lists ${m.cases.length}: ${path}`,
    );
  }
  if (m.changelog && m.changelog[0]?.version !== m.version) {
    throw new UsageError(
      `corpus manifest version ${m.version} has no changelog entry saying why it exists: ${path}`,
    );
  }
  const ids = new Set(m.cases.map((c) => c.id));
  if (ids.size !== m.cases.length)
    throw new UsageError(`corpus manifest lists a case twice: ${path}`);
  const lists: [string, string[]][] = [
    ...Object.entries(m.requirements).map(([k, v]): [string, string[]] => [
      `requirements.${k}`,
      v.cases,
    ]),
    ...Object.entries(m.named_tests).map(([k, v]): [string, string[]] => [`named_tests.${k}`, v]),
    ...Object.entries(m.stress_scenarios).map(([k, v]): [string, string[]] => [
      `stress_scenarios.${k}`,
      v.cases,
    ]),
    ...Object.entries(m.edge_cases).map(([k, v]): [string, string[]] => [
      `edge_cases.${k}`,
      v.cases,
    ]),
    ...Object.entries(m.profiles).map(([k, v]): [string, string[]] => [`profiles.${k}`, v.cases]),
  ];
  for (const [where, list] of lists) {
    const unknown = list.find((id) => !ids.has(id));
    if (unknown)
      throw new UsageError(`corpus manifest ${where} names unknown case ${unknown}: ${path}`);
    // A case named twice would run twice and count twice in the declaration's totals.
    const twice = list.find((id, i) => list.indexOf(id) !== i);
    if (twice) throw new UsageError(`corpus manifest ${where} names case ${twice} twice: ${path}`);
  }
  if (!m.profiles.full) throw new UsageError(`corpus manifest has no 'full' profile: ${path}`);
  return m;
}

/**
 * Reads one case's `expected.json` and checks its shape. Throws a one-line message on a broken
 * case (the runner turns it into an `error` verdict for that case alone).
 *
 * @example
 * loadCaseDoc(DEFAULT_CORPUS_DIR, 'conf-01--crlf-payload-verbatim').requirements; // ['CONF-01', 'CONF-02']
 */
export function loadCaseDoc(corpusDir: string, id: string): CaseDoc {
  const path = join(corpusDir, 'cases', id, 'expected.json');
  const r = caseDocSchema.safeParse(readJson(path, 'case file'));
  if (!r.success)
    throw new UsageError(`case file is malformed at ${issue(r.error)}: ${path}`, { path });
  const doc = r.data as CaseDoc;
  if (doc.case_id !== id)
    throw new UsageError(`case file names case ${doc.case_id}, its directory is ${id}`);
  return doc;
}

/**
 * Reads every input of a case as bytes and checks each against the byte length and SHA-256 its
 * `expected.json` records, and that the directory holds nothing else. A mismatch means the
 * fixture was altered (an editor "fixed" an invisible character): the case cannot be run.
 *
 * @example
 * const inputs = loadCaseInputs(dir, doc); inputs.get('payload.txt'); // Buffer
 */
export function loadCaseInputs(corpusDir: string, doc: CaseDoc): Map<string, Buffer> {
  const dir = join(corpusDir, 'cases', doc.case_id);
  const inputs = new Map<string, Buffer>();
  for (const input of doc.inputs) {
    if (inputs.has(input.file)) throw new UsageError(`input ${input.file} is listed twice`);
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(dir, input.file));
    } catch {
      throw new UsageError(`input ${input.file} is missing from ${dir}`);
    }
    if (bytes.length !== input.bytes) {
      throw new UsageError(
        `input ${input.file} has ${bytes.length} bytes, expected.json records ${input.bytes}: the fixture was altered`,
      );
    }
    const digest = sha256Hex(bytes);
    if (digest !== input.sha256) {
      throw new UsageError(
        `input ${input.file} has SHA-256 ${digest.slice(0, 12)}…, expected.json records ${input.sha256.slice(0, 12)}…: the fixture was altered`,
      );
    }
    inputs.set(input.file, bytes);
  }
  const extra = readdirSync(dir).filter((n) => n !== 'expected.json' && !inputs.has(n));
  if (extra.length > 0)
    throw new UsageError(
      `case directory holds unlisted files: ${extra.sort(compareCodePoints).join(', ')}`,
    );
  return inputs;
}

function listFiles(dir: string, rel: string, out: string[]): void {
  for (const name of readdirSync(join(dir, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    if (statSync(join(dir, r)).isDirectory()) listFiles(dir, r, out);
    else out.push(r);
  }
}

/**
 * The corpus content hash: SHA-256 of the `sha256sum`-style listing (`<hex>  <path>\n`, paths
 * relative to the corpus directory with `/`, sorted by code point) of `manifest.json` and every
 * file under `cases/`. Any changed byte of any case changes it.
 *
 * @example
 * corpusContentHash(DEFAULT_CORPUS_DIR).length; // 64
 */
export function corpusContentHash(corpusDir: string): string {
  const files: string[] = ['manifest.json'];
  if (existsSync(join(corpusDir, 'cases'))) listFiles(corpusDir, 'cases', files);
  files.sort(compareCodePoints);
  const listing = files
    .map((f) => `${sha256Hex(readFileSync(join(corpusDir, f)))}  ${f}\n`)
    .join('');
  return sha256Hex(listing);
}

/** A corpus directory opened once: its checked manifest, and its cases and hash read from it. */
export interface Corpus {
  readonly dir: string;
  readonly manifest: Manifest;
  /** {@link loadCaseDoc} in this corpus. */
  caseDoc(id: string): CaseDoc;
  /** {@link loadCaseInputs} in this corpus. */
  caseInputs(doc: CaseDoc): Map<string, Buffer>;
  /** {@link corpusContentHash} of this corpus. */
  contentHash(): string;
}

/**
 * Opens a corpus: reads and checks its manifest now ({@link loadManifest}), the cases on demand.
 *
 * @example
 * const corpus = openCorpus(); corpus.caseDoc(corpus.manifest.cases[0].id).case_id;
 */
export function openCorpus(dir: string = DEFAULT_CORPUS_DIR): Corpus {
  return {
    dir,
    manifest: loadManifest(dir),
    caseDoc: (id) => loadCaseDoc(dir, id),
    caseInputs: (doc) => loadCaseInputs(dir, doc),
    contentHash: () => corpusContentHash(dir),
  };
}
