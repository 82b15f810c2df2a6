import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import {
  buildGuardDeclaration,
  type GuardRunReport,
  runGuardConformance,
  validateGuardDeclaration,
} from './conformance.js';
import { caseIdOf, loadCorpusManifest, patternIdOfCase } from './corpus.js';
import { DEFAULT_GUARD_DIR, loadGuardTables, withoutPatterns } from './tables.js';

const tables = loadGuardTables();

describe('the guard corpus', () => {
  it('has at least 60 cases, negatives among them, and every case passes', async () => {
    const report = await runGuardConformance();
    expect(report.cases.length).toBeGreaterThanOrEqual(60);
    expect(
      report.cases.filter((c) => c.case_id.startsWith('benign__')).length,
    ).toBeGreaterThanOrEqual(10);
    const failing = report.cases.filter((c) => c.verdict !== 'pass');
    expect(failing).toEqual([]);
    const decl = buildGuardDeclaration(report);
    expect(validateGuardDeclaration(decl)).toEqual([]);
    expect(decl.counts).toEqual({
      pass: report.cases.length,
      fail: 0,
      not_applicable: 0,
      error: 0,
      total: report.cases.length,
    });
    expect(decl.declared_tables).toEqual([
      'lexicon/injection-lexicon.json',
      'secrets/secret-patterns.json',
      'signatures/active-content.json',
    ]);
  });

  it('holds the zero-width space and Cyrillic homoglyph cases, with their invisible bytes intact', () => {
    const input = (id: string) =>
      readFileSync(join(DEFAULT_GUARD_DIR, 'conformance', id, 'input.txt'));
    expect(input('active__zero-width').toString()).toContain('\u200B');
    expect(input('active__homoglyph-cyrillic').toString()).toContain('\u0430');
  });

  it('has no input ending with a line break (the manifest’s rule: exact bytes, no trailing newline)', () => {
    // Stop 46 found four (two CRLF cases, the rendered turn, the role header) and cut their
    // final line breaks: corpus 1.6.1, every case's meaning and findings unchanged.
    const ending = loadCorpusManifest().cases.filter((id) =>
      /[\r\n]$/.test(
        readFileSync(join(DEFAULT_GUARD_DIR, 'conformance', id, 'input.txt'), 'latin1'),
      ),
    );
    expect(ending).toEqual([]);
  });

  it('covers every published pattern with a positive case', () => {
    const named = new Set(loadCorpusManifest().cases.map(patternIdOfCase));
    for (const p of tables.patterns) expect(named.has(p.id), p.id).toBe(true);
  });

  it('derives case ids from pattern ids lexically, both ways', () => {
    expect(caseIdOf('override:ignore-previous')).toBe('override__ignore-previous');
    expect(caseIdOf('secret:pem-private-key', 'crlf')).toBe('secret__pem-private-key--crlf');
    expect(patternIdOfCase('secret__pem-private-key--crlf')).toBe('secret:pem-private-key');
    expect(patternIdOfCase('benign__jsx-handlers')).toBe('benign:jsx-handlers');
  });

  it('mutation: removing any one pattern fails at least one case', async () => {
    const survivors: string[] = [];
    for (const p of tables.patterns) {
      const report = await runGuardConformance({ tables: withoutPatterns(tables, [p.id]) });
      if (!report.cases.some((c) => c.verdict === 'fail')) survivors.push(p.id);
    }
    expect(survivors).toEqual([]);
  });
});

/** A private copy of the shipped guard directory to break on purpose. */
function copyGuard(): string {
  const d = tempDir('cf-guard-corpus-');
  onTestFinished(d.cleanup);
  cpSync(DEFAULT_GUARD_DIR, d.dir, { recursive: true });
  return d.dir;
}

function verdictOf(report: GuardRunReport, id: string) {
  return report.cases.find((c) => c.case_id === id)!;
}

describe('cases that cannot be trusted are errors, never passes', () => {
  it('an altered input (one byte changed, length kept) is an error', async () => {
    const dir = copyGuard();
    const p = join(dir, 'conformance', 'active__zero-width', 'input.txt');
    // Replacing the zero-width space by another three-byte character keeps the length.
    writeFileSync(p, readFileSync(p, 'utf8').replace('\u200B', '\u2002'));
    const r = verdictOf(await runGuardConformance({ guardDir: dir }), 'active__zero-width');
    expect(r.verdict).toBe('error');
    expect(r.reason).toMatch(/SHA-256/);
  });

  it('a trailing newline added by an editor is an error', async () => {
    const dir = copyGuard();
    const p = join(dir, 'conformance', 'override__ignore-previous', 'input.txt');
    writeFileSync(p, `${readFileSync(p, 'utf8')}\n`);
    const r = verdictOf(await runGuardConformance({ guardDir: dir }), 'override__ignore-previous');
    expect([r.verdict, r.reason]).toEqual(['error', expect.stringMatching(/bytes/)]);
  });

  it('a match other than exact-within-scope is rejected, not degraded', async () => {
    const dir = copyGuard();
    const p = join(dir, 'conformance', 'override__ignore-previous', 'expected.json');
    const e = JSON.parse(readFileSync(p, 'utf8'));
    e.match = 'contains';
    writeFileSync(p, JSON.stringify(e));
    const r = verdictOf(await runGuardConformance({ guardDir: dir }), 'override__ignore-previous');
    expect(r.verdict).toBe('error');
    expect(r.reason).toMatch(/not implemented/);
  });

  it('an expected finding not published in the scoped table is an error (membership by lookup)', async () => {
    const dir = copyGuard();
    const p = join(dir, 'conformance', 'active__script-tag', 'expected.json');
    const e = JSON.parse(readFileSync(p, 'utf8'));
    e.findings.push({ pattern_id: 'active:oversize-input' });
    writeFileSync(p, JSON.stringify(e));
    const r = verdictOf(await runGuardConformance({ guardDir: dir }), 'active__script-tag');
    expect(r.verdict).toBe('error');
  });

  it('a benign case that expects a finding contradicts itself: error', async () => {
    const dir = copyGuard();
    const p = join(dir, 'conformance', 'benign__jsx-handlers', 'expected.json');
    const e = JSON.parse(readFileSync(p, 'utf8'));
    e.findings = [{ pattern_id: 'active:script-tag' }];
    writeFileSync(p, JSON.stringify(e));
    const r = verdictOf(await runGuardConformance({ guardDir: dir }), 'benign__jsx-handlers');
    expect(r.verdict).toBe('error');
  });

  it('a case expecting a finding the runtime does not raise fails (exactness, both ways)', async () => {
    const dir = copyGuard();
    const p = join(dir, 'conformance', 'active__markdown-image-query', 'expected.json');
    const e = JSON.parse(readFileSync(p, 'utf8'));
    e.findings = [{ pattern_id: 'active:markdown-image-query' }];
    writeFileSync(p, JSON.stringify(e));
    const r = verdictOf(
      await runGuardConformance({ guardDir: dir }),
      'active__markdown-image-query',
    );
    expect([r.verdict, r.reason]).toEqual(['fail', 'unexpected active:markdown-image-external']);
  });
});

describe('declared tables and not-applicable', () => {
  it('a case scoped outside the declared set is not-applicable, enumerated and counted', async () => {
    const report = await runGuardConformance({
      declaredTables: ['lexicon/injection-lexicon.json', 'secrets/secret-patterns.json'],
    });
    const na = report.cases.filter((c) => c.verdict === 'not-applicable');
    expect(na.length).toBeGreaterThan(10);
    expect(na.every((c) => c.scope.includes('signatures/active-content.json'))).toBe(true);
    const decl = buildGuardDeclaration(report);
    expect(decl.counts.not_applicable).toBe(na.length);
    expect(decl.counts.total).toBe(report.cases.length);
    expect(decl.non_passing.filter((n) => n.verdict === 'not-applicable')).toHaveLength(na.length);
    expect(validateGuardDeclaration(decl)).toEqual([]);
  });
});

describe('validateGuardDeclaration', () => {
  it('rejects counts that do not add up, a total that is not the corpus size, and unknown fields', async () => {
    const decl = buildGuardDeclaration(await runGuardConformance());
    expect(
      validateGuardDeclaration({ ...decl, counts: { ...decl.counts, pass: decl.counts.pass - 1 } }),
    ).toContainEqual(expect.stringMatching(/do not sum/));
    const shrunk = { ...decl, counts: { ...decl.counts, pass: 1, total: 1 } };
    expect(validateGuardDeclaration(shrunk)).toEqual([expect.stringMatching(/corpus case count/)]);
    expect(validateGuardDeclaration({ ...decl, extra: 1 })).not.toEqual([]);
    const hidden = { ...decl, counts: { ...decl.counts, pass: decl.counts.pass - 1, fail: 1 } };
    expect(validateGuardDeclaration(hidden)).toEqual([
      expect.stringMatching(/non_passing lists 0/),
    ]);
  });

  it('has no timestamp: the same run gives the same bytes', async () => {
    const a = JSON.stringify(buildGuardDeclaration(await runGuardConformance()));
    const b = JSON.stringify(buildGuardDeclaration(await runGuardConformance()));
    expect(a).toBe(b);
  });
});

describe('the manifest', () => {
  it('must list exactly the case directories', () => {
    const dir = copyGuard();
    const p = join(dir, 'conformance', 'manifest.json');
    const m = JSON.parse(readFileSync(p, 'utf8'));
    m.cases = m.cases.slice(1);
    m.case_count = m.cases.length;
    writeFileSync(p, JSON.stringify(m));
    expect(() => loadCorpusManifest(dir)).toThrow(/must be the same set/);
  });
});
