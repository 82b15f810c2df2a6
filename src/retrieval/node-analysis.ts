import { hash } from 'node:crypto';
import { analyseRankedDoc } from './ranked-index.js';

/**
 * Version of the ranked node analysis ({@link analyzeNode} and everything it calls:
 * `rankedTerms`, `proseRatio`, `hasErrorSignal`, `heldShapes`). It is part of every analysis
 * key: bump it in the same change as any edit that alters what an analysis holds, and stores
 * re-analyse their nodes (pending) instead of ranking with stale keys.
 */
export const RANKED_ANALYZER_VERSION = 'ranked-analysis-r1';

/**
 * What the ranked index keeps of one node, in the generic form a store persists: retrieval
 * keys with their term frequencies (sorted by code point), the document length (keys with
 * repeats), and `features`, an opaque string only {@link decodeFeatures} reads.
 */
export interface NodeAnalysis {
  terms: string[];
  tfs: number[];
  length: number;
  features: string;
}

/** The per-node features ranked scoring uses beyond postings. */
export interface NodeFeatures {
  /** The node reports a failure (see `hasErrorSignal`). */
  error: boolean;
  /** Share of function words (see `proseRatio`). */
  prose: number;
  /** Answer shapes the payload holds (see `heldShapes`). */
  shapes: string[];
}

/**
 * Analyses one node for the ranked index: a pure function of its summary and payload text, so
 * a store can key it by content (see {@link analysisKey}) and never recompute it.
 *
 * @example
 * analyzeNode('tool: psql', 'port 5433 port').terms; // ['5433', 'port', 'psql', 'tool']
 */
export function analyzeNode(summary: string, text: string): NodeAnalysis {
  const a = analyseRankedDoc({ summary, content: text, tokens: 0 });
  return {
    terms: [...a.keys],
    tfs: [...a.counts],
    length: a.length,
    features: encodeFeatures({ error: a.error, prose: a.prose, shapes: [...a.shapes] }),
  };
}

/** `error|prose|shape,shape` (shape names never hold `|` or `,`). */
export function encodeFeatures(f: NodeFeatures): string {
  return `${f.error ? 1 : 0}|${f.prose}|${f.shapes.join(',')}`;
}

/** Reads what {@link encodeFeatures} wrote. */
export function decodeFeatures(s: string): NodeFeatures {
  const a = s.indexOf('|');
  const b = s.indexOf('|', a + 1);
  const shapes = s.slice(b + 1);
  return {
    error: s.slice(0, a) === '1',
    prose: Number(s.slice(a + 1, b)),
    shapes: shapes === '' ? [] : shapes.split(','),
  };
}

/**
 * The content address of a node's analysis: the analyzer version, the payload hash and the
 * summary (a node is immutable, so an analysis under this key never goes stale).
 *
 * @example
 * analysisKey({ payload_sha256: 'ab…', summary: 'tool: psql' }); // 64 hex
 */
export function analysisKey(node: { payload_sha256: string; summary: string }): string {
  return hash(
    'sha256',
    `${RANKED_ANALYZER_VERSION}\0${node.payload_sha256}\0${node.summary}`,
    'hex',
  );
}
