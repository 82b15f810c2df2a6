/**
 * `contextfold/conformance`: the IPCF-1.1 conformance runner (13 CONF requirements) over the
 * pattern corpus, the in-process library subject, the subject protocol for other engines, and
 * the declaration a run produces.
 *
 * @example
 * import { LibrarySubject, runConformance } from 'contextfold/conformance';
 * const report = await runConformance({ subject: new LibrarySubject() });
 */
export {
  corpusContentHash,
  DEFAULT_CORPUS_DIR,
  loadCaseDoc,
  loadCaseInputs,
  loadManifest,
} from './corpus.js';
export { buildDeclaration, validateDeclaration } from './declaration.js';
export { formatReport } from './format.js';
export { LIBRARY_REQUIREMENTS, LIBRARY_STRICTNESSES, LibrarySubject } from './library-subject.js';
export { type SpawnSubjectOptions, SubjectProtocolError, spawnSubject } from './process-subject.js';
export { DEFAULT_CASE_CLOCK, type RunOptions, runConformance } from './runner.js';
export { serveSubject } from './serve.js';
export {
  type CaseClass,
  type CaseDoc,
  type CaseInput,
  type CaseOutcome,
  type Declaration,
  type Manifest,
  type ObservedVerdict,
  type OperationParams,
  type OperationResult,
  REQUIREMENT_IDS,
  type RequirementId,
  type RunReport,
  type ScriptStep,
  type StepExpectation,
  type StrictnessAllowance,
  SUBJECT_PROTOCOL,
  type Subject,
  type SubjectHello,
  type SubjectRequest,
  type SubjectResponse,
  type Verdict,
} from './types.js';
