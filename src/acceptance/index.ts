/**
 * Adapter acceptance (contract 003): one case file every integration runs. Cases are data
 * (`conformance/adapters/cases.v1.json`); each integration supplies a subject driven through its
 * public entry point; the runner scores safety and liveness and weighs declared strictnesses.
 *
 * @example
 * import { runAdapterAcceptance, defaultSubjects, buildAdapterDeclaration } from 'contextfold/acceptance';
 * const decl = buildAdapterDeclaration(await runAdapterAcceptance({ subjects: defaultSubjects() }));
 */
export { type AnchorContext, type AnchorState, checkAnchor } from './anchors.js';
export { DEFAULT_CASE_FILE, type LoadedCaseFile, loadCaseFile } from './case-file.js';
export {
  type AcceptanceCase,
  type CallExpect,
  type CaseFile,
  type CaseInputDoc,
  caseFileJsonSchema,
  caseFileSchema,
  type HistoryTurn,
  type SourceAnchor,
  type StoreAction,
  type StoreExpect,
  type StrictnessAllowance,
} from './case-schema.js';
export {
  type AdapterDeclaration,
  adapterDeclarationJsonSchema,
  adapterDeclarationSchema,
  buildAdapterDeclaration,
  validateAdapterDeclaration,
} from './declaration.js';
export { formatAdapterTable } from './format.js';
export { type CallResult, deriveCall, type ParsedPage, parsePages } from './observe.js';
export {
  type AcceptanceOptions,
  type AcceptanceReport,
  type AdapterRun,
  runAdapterAcceptance,
} from './runner.js';
export { type Deviation, type FloorOutcome, type ScoredCase, scoreRun } from './score.js';
export type { StoredNode, StoreSnapshot } from './store-snapshot.js';
export {
  type AdapterSubject,
  type CallObservation,
  MODEL_REPLY,
  type SubjectCase,
  type SubjectCaseOptions,
  WARMUP_PROMPT,
} from './subject.js';
export { defaultSubjects, type ProcessSubjectOptions } from './subjects/index.js';
