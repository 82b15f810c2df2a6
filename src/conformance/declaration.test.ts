import { describe, expect, it } from 'vitest';
import { DEFAULT_CORPUS_DIR, loadManifest } from './corpus.js';
import { buildDeclaration, validateDeclaration } from './declaration.js';
import type { CaseOutcome, RunReport } from './types.js';

const manifest = loadManifest(DEFAULT_CORPUS_DIR);

function report(verdicts: Partial<Record<string, CaseOutcome['verdict']>>): RunReport {
  return {
    runtime: { name: 'other-engine', version: '2.0.0' },
    corpus: {
      name: manifest.corpus,
      version: manifest.version,
      content_sha256: 'a'.repeat(64),
      case_count: manifest.case_count,
    },
    profile: 'full',
    declared_requirements: ['CONF-01'],
    requirements_source: 'test',
    declared_strictnesses: ['refuses_non_utf8_payload'],
    cases: manifest.cases.map((c) => ({
      case_id: c.id,
      class: c.class,
      requirements: c.requirements,
      verdict: verdicts[c.id] ?? 'pass',
      reason: verdicts[c.id] ? `because ${c.id}` : '',
    })),
  };
}

describe('buildDeclaration / validateDeclaration', () => {
  it('counts every verdict, lists every non-passing case and per-requirement tallies', () => {
    const d = buildDeclaration(
      report({
        'conf-10--never-folded-step': 'fail',
        'conf-12--crash-a-orphaned-node': 'not-applicable',
        'conf-09--node-file-swapped': 'error',
      }),
    );
    expect(validateDeclaration(d)).toEqual([]);
    expect(d.counts).toEqual({
      pass: manifest.case_count - 3,
      fail: 1,
      not_applicable: 1,
      error: 1,
      total: manifest.case_count,
    });
    expect(d.non_passing.map((n) => [n.case_id, n.verdict])).toEqual([
      ['conf-09--node-file-swapped', 'error'],
      ['conf-10--never-folded-step', 'fail'],
      ['conf-12--crash-a-orphaned-node', 'not-applicable'],
    ]);
    expect(d.requirements['CONF-10']!.fail).toBe(1);
    expect(d.declared_strictnesses).toEqual([
      { conjunct: 'refuses_non_utf8_payload', applied_in: [] },
    ]);
  });

  it('rejects counts that do not add up, a wrong total, a hidden non-passing case and a bad shape', () => {
    const d = buildDeclaration(report({ 'conf-10--never-folded-step': 'fail' }));
    expect(
      validateDeclaration({ ...d, counts: { ...d.counts, pass: d.counts.pass - 1 } })[0],
    ).toMatch(/do not sum to total/);
    const short = {
      ...d,
      counts: { ...d.counts, pass: d.counts.pass - 1, total: d.counts.total - 1 },
    };
    expect(validateDeclaration(short).join()).toMatch(
      /total \d+ differs from the \d+ cases of profile full/,
    );
    expect(validateDeclaration({ ...d, non_passing: [] })[0]).toMatch(
      /non_passing lists 0 cases, counts say 1/,
    );
    expect(validateDeclaration({ ...d, runtime: { name: 'x' } }).join()).toMatch(/version/);
    expect(validateDeclaration({ ...d, extra: true }).join()).toMatch(/additional properties/);
  });
});
