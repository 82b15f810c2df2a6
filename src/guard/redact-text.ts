import { compareCodePoints, sha256Hex } from '../protocol/canonical-json.js';
import type { SecretHit } from './detect-secrets.js';
import { byteOffsets } from './utf8.js';

/**
 * A marker's text: `[REDACTED:<descriptor>]`.
 *
 * @example
 * redactionMarker('github-token'); // '[REDACTED:github-token]'
 */
export function redactionMarker(descriptor: string): string {
  return `[REDACTED:${descriptor}]`;
}

/** A marker already in a text: anything inside it is never redacted again (idempotence). */
const MARKER = /\[REDACTED:[a-z0-9]+(?:-[a-z0-9]+)*\]/g;

/** One removal in a redacted text, offsets in the *output* (UTF-8 bytes). */
export interface TextRedaction {
  pattern_id: string;
  merged_pattern_ids?: string[];
  start: number;
  end: number;
  removed_sha256: string;
}

/** A text after redaction and what was removed from it. */
export interface RedactedText {
  text: string;
  redactions: TextRedaction[];
}

/** One replacement as an edit of the input: at input byte `at`, the length changed by `delta`. */
interface Edit {
  at: number;
  delta: number;
}

interface Group {
  start: number;
  end: number;
  first: SecretHit;
  others: Set<string>;
}

/** Widens a span so it never splits a surrogate pair. */
function widen(text: string, start: number, end: number): [number, number] {
  const isLow = (i: number) => {
    const c = text.charCodeAt(i);
    return c >= 0xdc00 && c <= 0xdfff;
  };
  let s = start;
  let e = end;
  if (s > 0 && s < text.length && isLow(s)) s--;
  if (e > 0 && e < text.length && isLow(e)) e++;
  return [s, e];
}

/** Drops hits touching existing markers, then merges overlapping hits (input sorted by start). */
function groups(text: string, hits: readonly SecretHit[]): Group[] {
  const markers = text.includes('[REDACTED:')
    ? [...text.matchAll(MARKER)].map((m) => [m.index, m.index + m[0].length] as const)
    : [];
  const out: Group[] = [];
  for (const h of hits) {
    if (markers.some(([a, b]) => h.start < b && h.end > a)) continue;
    const [start, end] = widen(text, h.start, h.end);
    const last = out[out.length - 1];
    if (last && start < last.end) {
      last.end = Math.max(last.end, end);
      if (h.pattern.id !== last.first.pattern.id) last.others.add(h.pattern.id);
      continue;
    }
    out.push({ start, end, first: h, others: new Set() });
  }
  return out;
}

/**
 * Replaces every hit by its pattern's marker (one pass). Overlapping hits become one marker,
 * named after the earliest (then longest, then first-listed) pattern; the others are recorded
 * as merged. Hits touching a marker already present are ignored. Offsets are UTF-8 bytes of
 * the returned text; the hash is over the removed UTF-8 bytes.
 *
 * @example
 * applyRedactions('key ghp_x…', hits); // { text: 'key [REDACTED:github-token]', redactions: [...] }
 */
export function applyRedactions(
  text: string,
  hits: readonly SecretHit[],
): RedactedText & { edits: Edit[]; removed: string[] } {
  if (hits.length === 0) return { text, redactions: [], edits: [], removed: [] };
  const gs = groups(text, hits);
  if (gs.length === 0) return { text, redactions: [], edits: [], removed: [] };
  const edits: Edit[] = [];
  const removedValues: string[] = [];
  const edges: number[] = [];
  for (const g of gs) edges.push(g.start);
  const inputBytes = byteOffsets(text, edges);
  let out = '';
  let pos = 0;
  let shift = 0; // output bytes minus input bytes so far
  const redactions: TextRedaction[] = [];
  gs.forEach((g, i) => {
    const marker = redactionMarker(g.first.pattern.descriptor);
    const removed = text.slice(g.start, g.end);
    removedValues.push(removed);
    const removedBytes = Buffer.byteLength(removed, 'utf8');
    out += text.slice(pos, g.start) + marker;
    pos = g.end;
    const start = inputBytes[i]! + shift;
    const others = [...g.others].sort(compareCodePoints);
    redactions.push({
      pattern_id: g.first.pattern.id,
      ...(others.length > 0 ? { merged_pattern_ids: others } : {}),
      start,
      end: start + marker.length,
      removed_sha256: sha256Hex(removed),
    });
    edits.push({ at: inputBytes[i]!, delta: marker.length - removedBytes });
    shift += marker.length - removedBytes;
  });
  out += text.slice(pos);
  return { text: out, redactions, edits, removed: removedValues };
}

/**
 * Combines the records of a pass with those of a later pass over its output: earlier records
 * move by the length changes of the later edits before them (later edits never touch a
 * marker, so they never split one). Sorted by offset.
 */
export function combinePasses(
  earlier: readonly TextRedaction[],
  later: readonly TextRedaction[],
  laterEdits: readonly Edit[],
): TextRedaction[] {
  const moved = earlier.map((r) => {
    let shift = 0;
    for (const e of laterEdits) if (e.at < r.start) shift += e.delta;
    return { ...r, start: r.start + shift, end: r.end + shift };
  });
  return [...moved, ...later].sort((a, b) => a.start - b.start);
}
