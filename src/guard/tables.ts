import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import { packagePath } from '../fs/package-root.js';
import { GuardTableError } from '../protocol/errors.js';
import { compileSyncMatcher, type SyncMatch } from './matchers.js';
import { SECRETLINT_RULE_IDS } from './secretlint-rule-ids.js';
import { SHIPPED_TABLES_SHA256 } from './shipped-tables.js';
import {
  type GuardPattern,
  type GuardTable,
  guardTableSchemas,
  type Matcher,
} from './table-schema.js';
import type { Severity, TableKind } from './types.js';

/** The `guard/` data directory shipped with the package (tables, corpus, schemas). */
export const DEFAULT_GUARD_DIR = packagePath('guard') + sep;

/**
 * The table files this runtime implements, by kind, relative to `guard/`. This one constant is
 * both what the loader reads and the declared table set of the conformance declaration: a
 * corpus case scoped to any other file is `not-applicable`, and narrowing the declaration means
 * changing this code.
 */
export const GUARD_TABLE_FILES: Readonly<Record<TableKind, string>> = {
  secrets: 'secrets/secret-patterns.json',
  injection: 'lexicon/injection-lexicon.json',
  'active-content': 'signatures/active-content.json',
};

/** The declared table set, sorted (derived from {@link GUARD_TABLE_FILES}). */
export const DECLARED_TABLES: readonly string[] = Object.values(GUARD_TABLE_FILES).sort();

/** A pattern ready to run. `match` is null for `secretlint` matchers (run by the redactor). */
export interface CompiledPattern {
  id: string;
  /** The part of the id after the `:`; names the redaction marker. */
  descriptor: string;
  table: string;
  kind: TableKind;
  severity: Severity;
  matcher: Matcher;
  match: SyncMatch | null;
  trigger: RegExp | null;
}

/** Every table of a guard directory, validated and compiled. */
export interface GuardTables {
  dir: string;
  tables: ReadonlyMap<string, GuardTable>;
  /** All patterns in table-kind order (secrets, injection, active content), then file order. */
  patterns: readonly CompiledPattern[];
  /** Pattern id → the table file that publishes it (kept by {@link withoutPatterns}). */
  publishedIn: ReadonlyMap<string, string>;
}

function fail(path: string, why: string): never {
  throw new GuardTableError(`guard table ${path}: ${why}`, { path });
}

let schema: ReturnType<typeof guardTableSchemas>['guardTableSchema'] | undefined;

/** The table schema, built on first need with zod's CommonJS build (this load is synchronous). */
function tableSchema(): NonNullable<typeof schema> {
  schema ??= guardTableSchemas(
    (createRequire(import.meta.url)('zod') as typeof import('zod')).z,
  ).guardTableSchema;
  return schema;
}

/** A table's parsed JSON, checked against the schema unless its bytes are the shipped ones. */
function checked(bytes: Buffer, file: string, path: string): GuardTable {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    fail(path, `not valid JSON (${(e as Error).message})`);
  }
  // The shipped bytes are checked by the test suite (shipped-tables.test.ts).
  const sha = createHash('sha256').update(bytes).digest('hex');
  if (SHIPPED_TABLES_SHA256[file] === sha) return raw as GuardTable;
  const parsed = tableSchema().safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    fail(path, `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

function readTable(dir: string, kind: TableKind): GuardTable {
  const file = GUARD_TABLE_FILES[kind];
  const path = join(dir, file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    fail(path, code === 'ENOENT' ? 'file is missing' : `cannot be read (${(e as Error).message})`);
  }
  const t = checked(bytes, file, path);
  if (t.table !== file) fail(path, `"table" must be "${file}", got "${t.table}"`);
  if (t.kind !== kind) fail(path, `"kind" must be "${kind}", got "${t.kind}"`);
  return t;
}

function compilePattern(
  p: GuardPattern,
  family: string,
  t: GuardTable,
  path: string,
): CompiledPattern {
  const [fam, descriptor] = p.id.split(':') as [string, string];
  if (fam !== family) fail(path, `pattern ${p.id} is listed in family "${family}"`);
  const m = p.matcher;
  if (
    t.kind !== 'secrets' &&
    (m.kind === 'secretlint' || m.kind === 'pem-block' || m.kind === 'repeated-value')
  ) {
    fail(path, `pattern ${p.id}: a ${m.kind} matcher belongs in the secrets table`);
  }
  if (m.kind === 'secretlint' && !SECRETLINT_RULE_IDS.includes(m.rule)) {
    fail(path, `pattern ${p.id}: ${m.rule} is not a rule of the recommended preset`);
  }
  if (m.kind === 'secretlint' && !p.trigger) {
    fail(path, `pattern ${p.id}: a secretlint matcher needs a trigger (its prefilter)`);
  }
  try {
    return {
      id: p.id,
      descriptor,
      table: t.table,
      kind: t.kind,
      severity: p.severity,
      matcher: m,
      match: compileSyncMatcher(m),
      // Not global: `test` on a global regex would carry lastIndex from one text to the next.
      trigger: p.trigger ? new RegExp(p.trigger.pattern, p.trigger.flags) : null,
    };
  } catch (e) {
    return fail(path, `pattern ${p.id}: ${(e as Error).message}`);
  }
}

const cache = new Map<string, GuardTables>();

/**
 * Loads, validates and compiles the three tables of a guard directory (cached per directory).
 * Throws {@link GuardTableError} naming the file for anything that does not match the published
 * shape: version literal, file and kind, `family:descriptor` ids unique across tables, matcher
 * kinds allowed in the table, compilable regexes, known secretlint rules.
 *
 * @example
 * const t = loadGuardTables();
 * t.patterns.filter((p) => p.kind === 'injection').map((p) => p.id);
 */
export function loadGuardTables(dir: string = DEFAULT_GUARD_DIR): GuardTables {
  const hit = cache.get(dir);
  if (hit) return hit;
  const tables = new Map<string, GuardTable>();
  const patterns: CompiledPattern[] = [];
  const publishedIn = new Map<string, string>();
  for (const kind of Object.keys(GUARD_TABLE_FILES) as TableKind[]) {
    const t = readTable(dir, kind);
    const path = join(dir, t.table);
    tables.set(t.table, t);
    for (const f of t.families) {
      for (const p of f.patterns) {
        if (publishedIn.has(p.id)) fail(path, `pattern id ${p.id} is published twice`);
        publishedIn.set(p.id, t.table);
        patterns.push(compilePattern(p, f.id, t, path));
      }
    }
  }
  const loaded: GuardTables = { dir, tables, patterns, publishedIn };
  cache.set(dir, loaded);
  return loaded;
}

/**
 * The same tables without some patterns (mutation testing: every pattern must be needed by at
 * least one corpus case).
 *
 * @example
 * const mutant = withoutPatterns(loadGuardTables(), ['override:ignore-previous']);
 */
export function withoutPatterns(t: GuardTables, ids: readonly string[]): GuardTables {
  const drop = new Set(ids);
  return { ...t, patterns: t.patterns.filter((p) => !drop.has(p.id)) };
}

/** The table file that publishes a pattern id (membership by lookup, never by prefix). */
export function tableOf(t: GuardTables, patternId: string): string | undefined {
  return t.publishedIn.get(patternId);
}
