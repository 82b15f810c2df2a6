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
export * from './types.js';
