import { isContextFoldError } from '../protocol/errors.js';
import { type Page, pageFailure } from '../protocol/results.js';
import type {
  HydrateOptions,
  HydrateResult,
  PageInFailure,
  PageInResult,
  ScanResult,
} from './types.js';

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

/**
 * A reference page-in of a scan's picks: each hydrated within its cost, verified; a pick that
 * fails verification is reported in `failures`, never replaced (see `ContextFold.pageIn`).
 */
export async function hydratedPages(
  scan: ScanResult,
  hydrate: (stepId: number, options: HydrateOptions) => Promise<HydrateResult>,
): Promise<PageInResult> {
  const pages: Page[] = [];
  const failures: PageInFailure[] = [];
  let tokens = 0;
  for (const pick of scan.selected) {
    try {
      const h = await hydrate(pick.step_id, { maxTokens: pick.cost });
      pages.push(hydratedPage(h, pick.matched_terms));
      tokens += h.tokens;
    } catch (e) {
      if (!isContextFoldError(e)) throw e;
      failures.push(pageFailure(pick.step_id, e));
    }
  }
  return { scan, pages, failures, tokens };
}
