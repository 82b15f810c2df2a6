import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isGuardTableError } from '../protocol/errors.js';
import { tempDir } from '../test-utils/temp-dir.js';
import {
  DECLARED_TABLES,
  DEFAULT_GUARD_DIR,
  GUARD_TABLE_FILES,
  loadGuardTables,
  tableOf,
  withoutPatterns,
} from './tables.js';

describe('the shipped tables', () => {
  const t = loadGuardTables();

  it('load, and every id is family:descriptor of the family it is listed in, once', () => {
    expect(t.patterns.length).toBeGreaterThan(50);
    const ids = t.patterns.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const table of t.tables.values()) {
      for (const f of table.families) {
        for (const p of f.patterns) expect(p.id.split(':')[0]).toBe(f.id);
      }
    }
    for (const id of ids) expect(id).not.toMatch(/__|--/);
  });

  it('the declared table set is the set the loader reads', () => {
    expect(DECLARED_TABLES).toEqual(Object.values(GUARD_TABLE_FILES).sort());
    expect([...t.tables.keys()].sort()).toEqual(DECLARED_TABLES);
  });

  it('membership is by lookup in the published file, and survives removing a pattern', () => {
    expect(tableOf(t, 'override:ignore-previous')).toBe('lexicon/injection-lexicon.json');
    expect(tableOf(t, 'active:oversize-input')).toBeUndefined();
    const mutant = withoutPatterns(t, ['active:zero-width']);
    expect(mutant.patterns.some((p) => p.id === 'active:zero-width')).toBe(false);
    expect(tableOf(mutant, 'active:zero-width')).toBe('signatures/active-content.json');
  });

  it('every secret pattern that runs through secretlint has a trigger (its prefilter)', () => {
    for (const p of t.patterns.filter((x) => x.matcher.kind === 'secretlint')) {
      expect(p.trigger, p.id).not.toBeNull();
    }
  });
});

describe('loading a broken table is refused with the file named', () => {
  const broken = (file: string, edit: (t: Record<string, unknown>) => void): unknown => {
    const dir = tempDir('cf-guard-');
    for (const f of Object.values(GUARD_TABLE_FILES)) {
      cpSync(join(DEFAULT_GUARD_DIR, f), join(dir.dir, f), { recursive: true });
    }
    const path = join(dir.dir, file);
    const table = JSON.parse(readFileSync(path, 'utf8'));
    edit(table);
    writeFileSync(path, JSON.stringify(table));
    try {
      loadGuardTables(dir.dir);
      return null;
    } catch (e) {
      return e;
    } finally {
      dir.cleanup();
    }
  };
  const first = (t: Record<string, unknown>) =>
    (t.families as { id: string; patterns: Record<string, unknown>[] }[])[0]!;
  const lex = GUARD_TABLE_FILES.injection;
  const cases: [string, string, (t: Record<string, unknown>) => void, RegExp][] = [
    ['a wrong version', lex, (t) => (t.version = 'contextfold-guard-table/2'), /version/],
    ['a wrong table path', lex, (t) => (t.table = 'lexicon/other.json'), /"table" must be/],
    [
      'an id with an upper-case letter',
      lex,
      (t) => (first(t).patterns[0]!.id = 'override:Ignore'),
      /family:descriptor/,
    ],
    [
      'an id listed under another family',
      lex,
      (t) => (first(t).patterns[0]!.id = 'role:ignore-previous'),
      /listed in family/,
    ],
    [
      'a duplicate id',
      lex,
      (t) => first(t).patterns.push({ ...first(t).patterns[0]! }),
      /published twice/,
    ],
    [
      'a regex that does not compile',
      lex,
      (t) => ((first(t).patterns[0]!.matcher as { pattern: string }).pattern = '(unclosed'),
      /override:ignore-previous/,
    ],
    [
      'a g flag',
      lex,
      (t) => ((first(t).patterns[0]!.matcher as { flags: string }).flags = 'gi'),
      /flags/,
    ],
    [
      'a secretlint matcher outside the secrets table',
      lex,
      (t) =>
        (first(t).patterns[0]!.matcher = {
          kind: 'secretlint',
          rule: '@secretlint/secretlint-rule-github',
          message_id: 'GITHUB_TOKEN',
          value: 'KEY',
        }),
      /secrets table/,
    ],
    [
      'an unknown secretlint rule',
      GUARD_TABLE_FILES.secrets,
      (t) =>
        ((first(t).patterns[0]!.matcher as { rule: string }).rule =
          '@secretlint/secretlint-rule-nope'),
      /not a rule of the recommended preset/,
    ],
    [
      'a secretlint matcher without trigger',
      GUARD_TABLE_FILES.secrets,
      (t) => delete first(t).patterns[0]!.trigger,
      /needs a trigger/,
    ],
    ['an unknown field', lex, (t) => (first(t).patterns[0]!.weight = 3), /weight|Unrecognized/],
  ];
  for (const [what, file, edit, message] of cases) {
    it(what, () => {
      const e = broken(file, edit);
      expect(isGuardTableError(e), String(e)).toBe(true);
      expect((e as Error).message).toMatch(message);
      expect((e as Error).message).toContain(file);
    });
  }
});
