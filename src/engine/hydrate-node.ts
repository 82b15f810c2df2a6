// Hydrate's serving of one verified node: a window focused on lines, or one chunk of a payload
// cut at the per-call cap. Apart from the engine so the facade keeps only the lookup and the
// read around it.
import type { Tokenizer } from '../extract/tokenizer.js';
import { scanPage } from '../guard/scan-page.js';
import { UsageError } from '../protocol/errors.js';
import type { HydrationPolicy } from '../protocol/policy.js';
import type { IndexEntry } from '../protocol/types.js';
import { focusedText } from '../retrieval/ranked-focus.js';
import type { EngineStore } from './open-store.js';
import { payloadText } from './payload-text.js';
import type { TokenCosts } from './token-costs.js';
import type { HydrateOptions, HydrateResult } from './types.js';

/** What serving a node takes from the engine: its store, policy, tokenizer and token costs. */
export interface HydrateSources {
  store: EngineStore;
  policy: HydrationPolicy;
  tokenizer: Tokenizer;
  costs: TokenCosts;
}

const isCount = (x: unknown, min: number): boolean =>
  Number.isSafeInteger(x) && (x as number) >= min;

/**
 * Throws a UsageError for a `maxTokens` or `window` hydrate cannot serve as asked (NaN, a string,
 * a negative or reversed range): a verified result came back empty or cut to one token. A cap
 * of 0 is served as 1, as the cost of a pick whose payload is empty is 0.
 */
function checkHydrateOptions(options: HydrateOptions): void {
  if (options.maxTokens !== undefined && !isCount(options.maxTokens, 0)) {
    throw new UsageError(`maxTokens must be an integer >= 0, got ${String(options.maxTokens)}`);
  }
  const w = options.window;
  if (w === undefined) return;
  if (
    typeof w !== 'object' ||
    w === null ||
    !isCount(w.start_line, 0) ||
    !isCount(w.end_line, w.start_line) ||
    !isCount(w.max_tokens, 0) ||
    (w.tail_lines !== undefined && !isCount(w.tail_lines, 0))
  ) {
    throw new UsageError(
      'window must be a page window: { start_line, end_line } whole lines with start_line <= end_line, max_tokens and tail_lines integers >= 0 (as Page.window gives it)',
    );
  }
}

/**
 * The hydrate result for the indexed `entry` of `stepId`: the node verified (all three hashes)
 * before any byte is served, then the window or chunk `options` ask for.
 */
export function hydrateEntry(
  src: HydrateSources,
  stepId: number,
  entry: IndexEntry,
  options: HydrateOptions,
): HydrateResult {
  checkHydrateOptions(options);
  const v = src.store.verifyNode(entry);
  const text = payloadText(v);
  const perCall = src.policy.max_rehydration_tokens_per_call;
  const cap = Math.max(1, Math.min(options.maxTokens ?? perCall, perCall));
  const encoding = v.node.raw_content_encoding === 'base64' ? 'base64' : 'utf8';
  if (options.window) {
    const w = options.window;
    const win = focusedText({
      content: text,
      startLine: w.start_line,
      endLine: w.end_line,
      ...(w.tail_lines !== undefined ? { tailLines: w.tail_lines } : {}),
      maxTokens: Math.max(1, Math.min(w.max_tokens, perCall)),
      count: (s) => src.tokenizer.count(s),
    });
    return {
      step_id: stepId,
      content: win.text,
      tokens: win.tokens,
      chunk: 0,
      chunks: 1,
      truncated: win.truncated,
      payload_sha256: entry.payload_sha256,
      verified: true,
      encoding,
      findings: scanPage(win.text),
    };
  }
  const chunks = src.costs.chunksOf(entry, text, cap);
  const k = options.chunk ?? 0;
  if (!Number.isSafeInteger(k) || k < 0 || k >= chunks.length) {
    throw new UsageError(
      `step ${stepId} has ${chunks.length} chunk(s) (0..${chunks.length - 1}); chunk ${k} does not exist`,
      {
        stepId,
      },
    );
  }
  const content = chunks[k]!;
  return {
    step_id: stepId,
    content,
    tokens: src.costs.counter(entry, text).count(content),
    chunk: k,
    chunks: chunks.length,
    truncated: chunks.length > 1,
    payload_sha256: entry.payload_sha256,
    verified: true,
    encoding,
    findings: scanPage(content),
  };
}
