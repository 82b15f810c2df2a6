import type { Page } from '../protocol/results.js';
import type { HydrateResult } from './types.js';

/**
 * The page a reference pick becomes once hydrated: the verified chunk as `hydrate` returned it,
 * with the terms the pick matched.
 */
export function hydratedPage(h: HydrateResult, matchedTerms: string[]): Page {
  return {
    step_id: h.step_id,
    content: h.content,
    tokens: h.tokens,
    payload_sha256: h.payload_sha256,
    chunk: h.chunk,
    chunks: h.chunks,
    truncated: h.truncated,
    matched_terms: matchedTerms,
    findings: h.findings,
  };
}
