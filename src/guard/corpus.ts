import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { compareCodePoints, sha256Hex } from '../protocol/canonical-json.js';
import { GuardTableError } from '../protocol/errors.js';
import { PATTERN_ID_RE } from './table-schema.js';
import { DEFAULT_GUARD_DIR } from './tables.js';

/** The corpus directory inside a guard directory. */
export const CORPUS_SUBDIR = 'conformance';
/** The literal `version` of `guard/conformance/manifest.json`. */
export const CORPUS_MANIFEST_VERSION = 'contextfold-guard-corpus/1';
/** The only `match` value this runtime implements; any other is rejected (an error verdict). */
export const IMPLEMENTED_MATCH = 'exact-within-scope';
/**
 * The family of negative cases: no table publishes it, so a case named `benign__…` names no
 * rule, and its expected findings within scope are empty.
 */
export const NEGATIVE_FAMILY = 'benign';

const CASE_ID_RE =
  /^[a-z0-9]+(?:-[a-z0-9]+)*__[a-z0-9]+(?:-[a-z0-9]+)*(?:--[a-z0-9]+(?:-[a-z0-9]+)*)?$/;

const manifestSchema = z.strictObject({
  $comment: z.string().optional(),
  version: z.literal(CORPUS_MANIFEST_VERSION),
  corpus: z.string().min(1),
  corpus_version: z.string().regex(/^\d+\.\d+\.\d+$/),
  match_values: z.array(z.string()).min(1),
  scope_covered: z.array(z.string()).min(1),
  scope_planned: z.array(z.string()),
  negative_family: z.literal(NEGATIVE_FAMILY),
  case_count: z.number().int().min(0),
  cases: z.array(z.string().regex(CASE_ID_RE)),
});

/** `guard/conformance/manifest.json`: the corpus, versioned as a whole. */
export type CorpusManifest = z.infer<typeof manifestSchema>;

/** `expected.json` of one case (002 form). Fixtures carry no `version` of their own. */
export const expectedSchema = z.strictObject({
  $comment: z.string().optional(),
  case_id: z.string(),
  input: z.strictObject({
    file: z.literal('input.txt'),
    bytes: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  scope: z.array(z.string()).min(1),
  match: z.string(),
  findings: z.array(z.strictObject({ pattern_id: z.string().regex(PATTERN_ID_RE) })),
  observed_out_of_scope: z.record(z.string(), z.array(z.string())).optional(),
});

/** One case's `expected.json`. */
export type ExpectedCase = z.infer<typeof expectedSchema>;

/**
 * The pattern id a case id names: cut at the first `--` (the variant), then `__` → `:`.
 * Lexical, no lookup (002 §6).
 *
 * @example
 * patternIdOfCase('active__zero-width--in-word'); // 'active:zero-width'
 */
export function patternIdOfCase(caseId: string): string {
  const cut = caseId.indexOf('--');
  return (cut < 0 ? caseId : caseId.slice(0, cut)).replace('__', ':');
}

/** The case id of a pattern id and an optional variant slug. */
export function caseIdOf(patternId: string, variant?: string): string {
  const base = patternId.replace(':', '__');
  return variant ? `${base}--${variant}` : base;
}

/** The corpus directory of a guard directory. */
export function corpusDir(guardDir: string = DEFAULT_GUARD_DIR): string {
  return join(guardDir, CORPUS_SUBDIR);
}

/** Reads and checks the manifest: shape, literal version, case list equal to the directories. */
export function loadCorpusManifest(guardDir: string = DEFAULT_GUARD_DIR): CorpusManifest {
  const dir = corpusDir(guardDir);
  const path = join(dir, 'manifest.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new GuardTableError(
      `guard corpus manifest ${path} cannot be read: ${(e as Error).message}`,
      {
        path,
      },
    );
  }
  const parsed = manifestSchema.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new GuardTableError(
      `guard corpus manifest ${path}: ${i.path.join('.') || '(root)'}: ${i.message}`,
      { path },
    );
  }
  const m = parsed.data;
  const dirs = readdirSync(dir)
    .filter((n) => statSync(join(dir, n)).isDirectory())
    .sort(compareCodePoints);
  const listed = [...m.cases].sort(compareCodePoints);
  if (m.case_count !== m.cases.length || JSON.stringify(dirs) !== JSON.stringify(listed)) {
    throw new GuardTableError(
      `guard corpus manifest ${path} lists ${m.cases.length} case(s) (case_count ${m.case_count}) but ${dir} holds ${dirs.length} case directories; they must be the same set`,
      { path },
    );
  }
  return m;
}

/**
 * SHA-256 of the corpus content: a `sha256sum`-style listing (hash, two spaces, path) of the
 * manifest and every case file, sorted by path.
 */
export function corpusContentHash(guardDir: string = DEFAULT_GUARD_DIR): string {
  const dir = corpusDir(guardDir);
  const files = ['manifest.json'];
  for (const c of readdirSync(dir)) {
    const sub = join(dir, c);
    if (!statSync(sub).isDirectory()) continue;
    for (const f of readdirSync(sub)) files.push(`${c}/${f}`);
  }
  files.sort(compareCodePoints);
  const listing = files.map((f) => `${sha256Hex(readFileSync(join(dir, f)))}  ${f}\n`).join('');
  return sha256Hex(listing);
}

/** A case as read from disk, before any check. */
export interface RawCase {
  case_id: string;
  dir: string;
  expected: unknown;
  input: Buffer | null;
}

/** Reads one case's two files (a missing or unreadable file is left for the runner to report). */
export function readCase(guardDir: string, caseId: string): RawCase {
  const dir = join(corpusDir(guardDir), caseId);
  let expected: unknown = null;
  const ep = join(dir, 'expected.json');
  if (existsSync(ep)) {
    try {
      expected = JSON.parse(readFileSync(ep, 'utf8'));
    } catch {
      expected = { unparsable: true };
    }
  }
  const ip = join(dir, 'input.txt');
  return { case_id: caseId, dir, expected, input: existsSync(ip) ? readFileSync(ip) : null };
}
