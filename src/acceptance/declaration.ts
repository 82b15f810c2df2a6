import { z } from 'zod';
import { verdictCountsSchema } from '../conformance/corpus.js';
import { verdictCounts, verdictKey } from '../protocol/verdict.js';
import type { AcceptanceReport, AdapterRun } from './runner.js';

const counts = verdictCountsSchema;

const adapterDeclaration = z
  .object({
    adapter: z.string().min(1),
    entry_point: z.string().min(1),
    declared_requirements: z.array(z.string()),
    requirements_source: z.string().min(1),
    counts,
    by_class: z.object({ safety: counts, liveness: counts }).strict(),
    non_passing: z.array(
      z
        .object({
          case_id: z.string().min(1),
          class: z.enum(['safety', 'liveness']),
          verdict: z.enum(['fail', 'not-applicable', 'error']),
          reason: z
            .string()
            .min(1)
            .regex(/^[^\n]*$/),
        })
        .strict(),
    ),
    declared_strictnesses: z
      .array(
        z
          .object({
            conjunct: z.string().regex(/^[a-z][a-z0-9_]*$/),
            declared_in: z.number().int().nonnegative(),
            applied_in: z.array(z.string()),
          })
          .strict(),
      )
      .describe(
        'every conjunct the adapter declared on a result of this run, how many results carried it, and the liveness cases it excused: the visible cost of strictness',
      ),
  })
  .strict();

/** The published result of `contextfold conformance --adapters --json`. */
export const adapterDeclarationSchema = z
  .object({
    declaration_version: z.literal('1'),
    contract: z.string().min(1),
    suite: z
      .object({
        name: z.string().min(1),
        version: z.string().regex(/^[0-9]+\.[0-9]+\.[0-9]+$/),
        content_sha256: z.string().regex(/^[0-9a-f]{64}$/),
        case_count: z.number().int().nonnegative(),
      })
      .strict(),
    profile: z.string().min(1),
    anchors: z
      .object({
        holds: z.number().int().nonnegative(),
        broken: z.number().int().nonnegative(),
        unchecked: z.number().int().nonnegative(),
      })
      .strict()
      .describe(
        'source anchors of the cases run: unchecked ones had no specification text to read',
      ),
    adapters: z.array(adapterDeclaration),
  })
  .strict();

/** The published result of an adapter acceptance run (validated by `adapterDeclarationSchema`). */
export type AdapterDeclaration = z.infer<typeof adapterDeclarationSchema>;

type Counts = z.infer<typeof counts>;
function tally(cases: AdapterRun['cases']): Counts {
  const c: Counts = { ...verdictCounts(), total: cases.length };
  for (const x of cases) c[verdictKey(x.verdict)]++;
  return c;
}

function strictnesses(run: AdapterRun) {
  const names = [...new Set(run.cases.flatMap((c) => c.declared))].sort();
  return names.map((conjunct) => ({
    conjunct,
    declared_in: run.cases.filter((c) => c.declared.includes(conjunct)).length,
    applied_in: run.cases.filter((c) => c.strictness.includes(conjunct)).map((c) => c.case_id),
  }));
}

/**
 * The per-adapter declaration of a run: verdict counts (overall and by class), every case that
 * did not pass with its one-line reason, and the strictnesses accumulated from the results.
 * Holds no timestamp: the same code on the same case file publishes the same bytes.
 *
 * @example
 * JSON.stringify(buildAdapterDeclaration(await runAdapterAcceptance({ subjects })));
 */
export function buildAdapterDeclaration(report: AcceptanceReport): AdapterDeclaration {
  const anchors = { holds: 0, broken: 0, unchecked: 0 };
  for (const a of report.anchors) anchors[a.state]++;
  return {
    declaration_version: '1',
    contract: report.contract,
    suite: report.suite,
    profile: report.profile,
    anchors,
    adapters: report.adapters.map((run) => ({
      adapter: run.adapter,
      entry_point: run.entry_point,
      declared_requirements: run.declared_requirements,
      requirements_source: run.requirements_source,
      counts: tally(run.cases),
      by_class: {
        safety: tally(run.cases.filter((c) => c.class === 'safety')),
        liveness: tally(run.cases.filter((c) => c.class === 'liveness')),
      },
      non_passing: run.cases
        .filter((c) => c.verdict !== 'pass')
        .map((c) => ({
          case_id: c.case_id,
          class: c.class,
          verdict: c.verdict as 'fail' | 'not-applicable' | 'error',
          reason: c.reason,
        })),
      declared_strictnesses: strictnesses(run),
    })),
  };
}

/**
 * Checks a declaration against its schema and the invariants a schema cannot state (counts sum
 * to the total; `non_passing` lists exactly the cases that did not pass). Returns the problems.
 *
 * @example
 * validateAdapterDeclaration(buildAdapterDeclaration(report)); // []
 */
export function validateAdapterDeclaration(decl: unknown): string[] {
  const r = adapterDeclarationSchema.safeParse(decl);
  if (!r.success) return r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  const problems: string[] = [];
  for (const a of r.data.adapters) {
    for (const c of [a.counts, a.by_class.safety, a.by_class.liveness]) {
      if (c.pass + c.fail + c.not_applicable + c.error !== c.total)
        problems.push(`${a.adapter}: counts do not sum to their total`);
    }
    if (a.by_class.safety.total + a.by_class.liveness.total !== a.counts.total)
      problems.push(`${a.adapter}: the classes do not add up to the total`);
    if (a.non_passing.length !== a.counts.total - a.counts.pass)
      problems.push(`${a.adapter}: non_passing lists ${a.non_passing.length} cases`);
  }
  return problems;
}

/**
 * The published JSON Schema of the declaration, generated from {@link adapterDeclarationSchema}.
 *
 * @example
 * writeFileSync('declaration.schema.json', `${JSON.stringify(adapterDeclarationJsonSchema(), null, 2)}\n`);
 */
export function adapterDeclarationJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(adapterDeclarationSchema, { target: 'draft-2020-12' }),
    $id: 'https://github.com/contextfold/contextfold/conformance/adapters/declaration.schema.json',
    title: 'contextfold adapter acceptance declaration',
    description:
      'What `contextfold conformance --adapters --json` publishes. Generated from src/acceptance/declaration.ts. Invariants checked by the runner: each counts object sums to its total, the classes add up to the total, non_passing lists exactly the cases that did not pass.',
  };
}
