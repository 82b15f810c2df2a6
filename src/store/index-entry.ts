import { canonicalJson } from '../protocol/canonical-json.js';
import { checkIndexEntry } from '../protocol/schemas.js';
import { type IndexEntry, PROJECTION_VERSION } from '../protocol/types.js';

/**
 * An index entry with the fields older reference indexes may lack filled in (as the reference
 * reads them). Fields it does not know are kept.
 */
export function normaliseEntry(raw: Record<string, unknown>): IndexEntry {
  if (
    raw.projection_version !== undefined &&
    raw.summary !== undefined &&
    raw.token_estimate !== undefined &&
    raw.identifiers !== undefined &&
    raw.files !== undefined &&
    raw.commands !== undefined &&
    raw.errors !== undefined
  ) {
    return raw as unknown as IndexEntry;
  }
  return {
    ...(raw as unknown as IndexEntry),
    projection_version: (raw.projection_version as string | undefined) ?? PROJECTION_VERSION,
    summary: (raw.summary as string | undefined) ?? '',
    token_estimate: (raw.token_estimate as number | undefined) ?? 1,
    identifiers: (raw.identifiers as string[] | undefined) ?? [],
    files: (raw.files as string[] | undefined) ?? [],
    commands: (raw.commands as string[] | undefined) ?? [],
    errors: (raw.errors as string[] | undefined) ?? [],
  };
}

/** A checked, normalised entry and its canonical JSON, or why it cannot be indexed. */
export type ParsedEntry =
  | { ok: true; entry: IndexEntry; json: string }
  | { ok: false; reason: string };

/**
 * Checks a raw entry against the schema and serialises it canonically (the bytes a compaction
 * writes for it).
 */
export function parseEntry(raw: unknown): ParsedEntry {
  const bad = checkIndexEntry(raw);
  if (bad) return { ok: false, reason: `is malformed at ${bad}` };
  const entry = normaliseEntry(raw as Record<string, unknown>);
  try {
    return { ok: true, entry, json: canonicalJson(entry) };
  } catch (e) {
    return { ok: false, reason: `cannot be serialised canonically (${(e as Error).message})` };
  }
}
