import { compareCodePoints, sha256Hex } from '../protocol/canonical-json.js';
import { SecretDetector } from './detect-secrets.js';
import { PAGE_TABLE_KINDS, scanText } from './scan-page.js';
import { type GuardTables, loadGuardTables } from './tables.js';
import type { GuardFinding } from './types.js';
import { byteOffsets, utf8Runs } from './utf8.js';
import { decodeUtf16, utf16Offsets } from './utf16.js';

/** A finding of `guard scan`; secret findings carry the SHA-256 of the value, never the value. */
export interface ScanFinding extends GuardFinding {
  value_sha256?: string;
}

/** What `contextfold guard scan` reports for one input. */
export interface GuardScanResult {
  bytes: number;
  sha256: string;
  /** False when the input is not UTF-8: only its well-formed runs were scanned (UTF-16 aside). */
  utf8: boolean;
  /** Set when the input is UTF-16 with a byte-order mark: it was scanned as text. */
  utf16?: 'le' | 'be';
  /** Every finding of every table, by byte offset (secrets: before merging overlaps). */
  findings: ScanFinding[];
  /** Findings per pattern id, sorted by id. */
  counts: Record<string, number>;
}

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

async function scanRun(
  text: string,
  base: number,
  tables: GuardTables,
  detector: SecretDetector,
): Promise<ScanFinding[]> {
  const out: ScanFinding[] = scanText(text, tables, PAGE_TABLE_KINDS).map((f) => ({
    ...f,
    start: f.start + base,
    end: f.end + base,
  }));
  const hits = await detector.detect(text);
  const edges = hits.flatMap((h) => [h.start, h.end]).sort((a, b) => a - b);
  const offsets = byteOffsets(text, edges);
  const at = new Map(edges.map((v, i) => [v, offsets[i]!]));
  for (const h of hits) {
    out.push({
      pattern_id: h.pattern.id,
      table: h.pattern.table,
      severity: h.pattern.severity,
      start: at.get(h.start)! + base,
      end: at.get(h.end)! + base,
      value_sha256: sha256Hex(text.slice(h.start, h.end)),
    });
  }
  return out;
}

/**
 * Scans an input with every table (secrets, injection lexicon, active content) and reports
 * each finding with its byte offsets. Nothing is changed or stored; secret values are reported
 * by hash only. UTF-16 with a byte-order mark is scanned as text (offsets in its bytes); any
 * other non-UTF-8 input in its well-formed UTF-8 runs.
 *
 * @example
 * const r = await scanInput(readFileSync('page.html'));
 * r.findings.map((f) => f.pattern_id);
 */
export async function scanInput(
  input: string | Uint8Array,
  tables: GuardTables = loadGuardTables(),
): Promise<GuardScanResult> {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const detector = new SecretDetector(tables);
  const runs = utf8Runs(bytes);
  const utf16 = decodeUtf16(bytes);
  const findings: ScanFinding[] = [];
  if (utf16) {
    // Scanned as text; UTF-8 offsets of the text become offsets in the UTF-16 bytes.
    const found = await scanRun(utf16.text, 0, tables, detector);
    const edges = [...new Set(found.flatMap((f) => [f.start, f.end]))].sort((a, b) => a - b);
    const offsets = utf16Offsets(utf16.text, edges);
    const at = new Map(edges.map((v, i) => [v, offsets[i]!]));
    for (const f of found) findings.push({ ...f, start: at.get(f.start)!, end: at.get(f.end)! });
  } else {
    for (const run of runs) {
      if (!run.valid) continue;
      const text = strict.decode(bytes.subarray(run.start, run.end));
      findings.push(...(await scanRun(text, run.start, tables, detector)));
    }
  }
  findings.sort(
    (a, b) => a.start - b.start || a.end - b.end || compareCodePoints(a.pattern_id, b.pattern_id),
  );
  const counts: Record<string, number> = {};
  for (const f of [...findings].sort((a, b) => compareCodePoints(a.pattern_id, b.pattern_id))) {
    counts[f.pattern_id] = (counts[f.pattern_id] ?? 0) + 1;
  }
  return {
    bytes: bytes.length,
    sha256: sha256Hex(bytes),
    utf8: runs.every((r) => r.valid),
    ...(utf16 ? { utf16: utf16.order } : {}),
    findings,
    counts,
  };
}
