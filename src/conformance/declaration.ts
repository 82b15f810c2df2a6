import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { verdictCounts, verdictKey } from '../protocol/verdict.js';
import { DEFAULT_CORPUS_DIR, loadManifest } from './corpus.js';
import { type Declaration, REQUIREMENT_IDS, type RunReport, SUBJECT_PROTOCOL } from './types.js';

/**
 * Turns a run into the published declaration (conformance/declaration.schema.json): runtime,
 * corpus version and content hash, declared requirements, the four verdict counts (summing to
 * the total), every non-passing case with its reason, and the declared strictnesses. Contains
 * no timestamp: the same run of the same corpus gives the same bytes.
 *
 * @example
 * JSON.stringify(buildDeclaration(await runConformance({ subject })), null, 2);
 */
export function buildDeclaration(report: RunReport): Declaration {
  const counts = { ...verdictCounts(), total: report.cases.length };
  const requirements: Declaration['requirements'] = {};
  for (const r of REQUIREMENT_IDS) requirements[r] = verdictCounts();
  for (const c of report.cases) {
    counts[verdictKey(c.verdict)]++;
    for (const r of c.requirements) requirements[r]![verdictKey(c.verdict)]++;
  }
  return {
    declaration_version: '1',
    specification: 'IPCF-1.1',
    subject_protocol: SUBJECT_PROTOCOL,
    runtime: report.runtime,
    corpus: report.corpus,
    profile: report.profile,
    declared_requirements: report.declared_requirements,
    requirements_source: report.requirements_source,
    counts,
    non_passing: report.cases
      .filter((c) => c.verdict !== 'pass')
      .map((c) => ({
        case_id: c.case_id,
        verdict: c.verdict as 'fail' | 'not-applicable' | 'error',
        reason: c.reason,
      })),
    declared_strictnesses: report.declared_strictnesses.map((conjunct) => ({
      conjunct,
      applied_in: report.cases.filter((c) => c.strictness === conjunct).map((c) => c.case_id),
    })),
    requirements,
  };
}

let validator: ((v: unknown) => boolean) & { errors?: unknown } = null as never;

/**
 * Checks a declaration against the schema and the two invariants the schema cannot state: the
 * counts sum to the total, and the total is the declared profile's case count in the corpus.
 * Returns the list of problems (empty when valid).
 *
 * @example
 * validateDeclaration(buildDeclaration(report)); // []
 */
export function validateDeclaration(decl: unknown, corpusDir = DEFAULT_CORPUS_DIR): string[] {
  if (!validator) {
    const schema = JSON.parse(
      readFileSync(join(corpusDir, 'declaration.schema.json'), 'utf8'),
    ) as object;
    validator = new Ajv2020({ allErrors: true, strict: true }).compile(schema);
  }
  const problems: string[] = [];
  if (!validator(decl)) {
    for (const e of (validator.errors ?? []) as { instancePath: string; message?: string }[]) {
      problems.push(`${e.instancePath || '(root)'}: ${e.message}`);
    }
    return problems;
  }
  const d = decl as Declaration;
  const c = d.counts;
  if (c.pass + c.fail + c.not_applicable + c.error !== c.total) {
    problems.push(
      `counts do not sum to total: ${c.pass}+${c.fail}+${c.not_applicable}+${c.error} != ${c.total}`,
    );
  }
  if (d.non_passing.length !== c.fail + c.not_applicable + c.error) {
    problems.push(
      `non_passing lists ${d.non_passing.length} cases, counts say ${c.fail + c.not_applicable + c.error}`,
    );
  }
  const manifest = loadManifest(corpusDir);
  if (manifest.version === d.corpus.version) {
    const profile = manifest.profiles[d.profile];
    if (!profile) problems.push(`profile ${d.profile} is not in corpus ${manifest.version}`);
    else if (profile.cases.length !== c.total) {
      problems.push(
        `total ${c.total} differs from the ${profile.cases.length} cases of profile ${d.profile}`,
      );
    }
  }
  return problems;
}
