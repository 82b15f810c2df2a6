/** The subject protocol this runner speaks (conformance/PROTOCOL.md). */
export const SUBJECT_PROTOCOL = 'ipcf-subject/1';

/** The IPCF-1.1 requirement ids, in order. */
export const REQUIREMENT_IDS = [
  'CONF-01',
  'CONF-02',
  'CONF-03',
  'CONF-04',
  'CONF-05',
  'CONF-06',
  'CONF-07',
  'CONF-08',
  'CONF-09',
  'CONF-10',
  'CONF-11',
  'CONF-12',
  'CONF-13',
] as const;

/** One IPCF-1.1 requirement id (`CONF-01` … `CONF-13`). */
export type RequirementId = (typeof REQUIREMENT_IDS)[number];

import type { CaseClass, Verdict } from '../protocol/verdict.js';

export type { CaseClass, Verdict };

/** One input file of a case, with the integrity data the runner checks before use. */
export interface CaseInput {
  file: string;
  bytes: number;
  sha256: string;
}

/** A stricter behaviour a liveness case allows when the subject declares it. */
export interface StrictnessAllowance {
  conjunct: string;
  description: string;
  /** Index into `script` of the step that may be refused. */
  step: number;
  /** The error names the refusal may carry. */
  errors: string[];
  /** A case where the condition is absent; it must pass for the declaration to count. */
  absence_case_id: string;
}

/**
 * What a step must produce. `{ error: '*' }` is any refusal: the specification requires the step
 * to fail without naming the error (PROTOCOL.md §4.1).
 */
export type StepExpectation = { error: string } | { result: unknown } | { any: true };

/** One step of a case script: a subject operation (`op`) or a runner filesystem action (`fs`). */
export interface ScriptStep {
  op?: string;
  fs?: string;
  expect?: StepExpectation;
  save?: Record<string, string>;
  [param: string]: unknown;
}

/** Evidence: a verdict measured on a named runtime. Informative; never compared. */
export interface ObservedVerdict {
  runtime: string;
  corpus_version: string;
  verdict: Verdict;
  note: string;
}

/** A case's `expected.json`. */
export interface CaseDoc {
  case_id: string;
  title: string;
  description: string;
  requirements: RequirementId[];
  class: CaseClass;
  tags: string[];
  provenance: string;
  strictness_allowed: StrictnessAllowance[];
  inputs: CaseInput[];
  script: ScriptStep[];
  /** Verdicts measured on other runtimes (evidence, never an expectation). */
  observed?: ObservedVerdict[];
}

/** `conformance/manifest.json`. */
export interface Manifest {
  corpus: string;
  version: string;
  specification: string;
  subject_protocol: string;
  case_count: number;
  /** Why each version exists, newest first (PROTOCOL.md §7). */
  changelog?: { version: string; kind: 'major' | 'minor' | 'patch'; reason: string }[];
  /** Whole-corpus verdict counts measured on other runtimes (evidence, never an expectation). */
  observed?: {
    runtime: string;
    corpus_version: string;
    profiles: Record<
      string,
      { pass: number; fail: number; not_applicable: number; error: number; total: number }
    >;
    note: string;
  }[];
  cases: { id: string; requirements: RequirementId[]; class: CaseClass }[];
  requirements: Record<string, { title: string; cases: string[] }>;
  named_tests: Record<string, string[]>;
  stress_scenarios: Record<string, { description: string; cases: string[] }>;
  edge_cases: Record<string, { description: string; cases: string[] }>;
  profiles: Record<string, { description: string; cases: string[] }>;
}

/** A request line sent to a subject. */
export interface SubjectRequest {
  id: number;
  op: string;
  [param: string]: unknown;
}

/** The parameters of a subject-protocol operation: the request's fields besides `id` and `op`. */
export type OperationParams = Record<string, unknown>;

/** The result of a subject-protocol operation: the `result` of a successful response. */
export type OperationResult = Record<string, unknown>;

/** A response line from a subject: a result, or an error carrying its IPCF error name. */
export type SubjectResponse =
  | { id: number; ok: true; result: Record<string, unknown> }
  | { id: number; ok: false; error: { name: string; message: string; [k: string]: unknown } };

/** What a subject says about itself in answer to `hello`. */
export interface SubjectHello {
  protocol: string;
  runtime: { name: string; version: string };
  requirements: string[];
  strictnesses: string[];
  requirements_source?: string;
}

/**
 * A conformance subject: anything that answers subject-protocol requests. The runner never
 * looks behind this interface.
 *
 * @example
 * const r = await subject.request({ id: 1, op: 'hello', protocol: SUBJECT_PROTOCOL });
 */
export interface Subject {
  /** Sends one request; resolves with the response, rejects only when the subject broke the protocol. */
  request(req: SubjectRequest): Promise<SubjectResponse>;
  /** Releases the subject (ends the process). */
  close(): Promise<void>;
}

/** The outcome of one case. */
export interface CaseOutcome {
  case_id: string;
  class: CaseClass;
  requirements: RequirementId[];
  verdict: Verdict;
  /** One line; empty for a plain pass. */
  reason: string;
  /** The declared strictness that excused a refused liveness step, if any. */
  strictness?: string;
}

/** Everything a run produced; {@link buildDeclaration} turns it into the published form. */
export interface RunReport {
  runtime: { name: string; version: string };
  corpus: { name: string; version: string; content_sha256: string; case_count: number };
  profile: string;
  declared_requirements: string[];
  requirements_source: string;
  declared_strictnesses: string[];
  cases: CaseOutcome[];
}

/** The published declaration (conformance/declaration.schema.json). */
export interface Declaration {
  declaration_version: '1';
  specification: 'IPCF-1.1';
  subject_protocol: string;
  runtime: { name: string; version: string };
  corpus: { name: string; version: string; content_sha256: string; case_count: number };
  profile: string;
  declared_requirements: string[];
  requirements_source: string;
  counts: { pass: number; fail: number; not_applicable: number; error: number; total: number };
  non_passing: { case_id: string; verdict: Exclude<Verdict, 'pass'>; reason: string }[];
  declared_strictnesses: { conjunct: string; applied_in: string[] }[];
  requirements: Record<
    string,
    { pass: number; fail: number; not_applicable: number; error: number }
  >;
}
