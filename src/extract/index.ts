/**
 * `contextfold/extract`: what IPCF-1.1 derives from a turn's text, byte-compatible with the
 * reference engine: the projection (preview, sizes), the recall terms, and the token counters.
 *
 * @example
 * import { queryTerms, resolveTokenizer } from 'contextfold/extract';
 * queryTerms('Which port does PostgreSQL use?'); // ['does', 'port', 'postgresql', 'use']
 */

export type { ExtractedTerms } from '../protocol/types.js';
export { type Projection, type ProjectionInput, project } from './projection.js';
export {
  type ExplicitTerms,
  extractTerms,
  foldToken,
  identifiersOf,
  nodeTerms,
  queryTerms,
} from './terms.js';
export {
  o200kTokenizer,
  referenceTokenizer,
  resolveTokenizer,
  type Tokenizer,
} from './tokenizer.js';
