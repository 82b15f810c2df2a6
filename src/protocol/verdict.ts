// Verdicts of the conformance, guard and adapter acceptance runs: one definition for all three.

/**
 * The four verdicts; every case of a run ends in exactly one.
 *
 * @example
 * VERDICTS.includes('not-applicable'); // true
 */
export const VERDICTS = ['pass', 'fail', 'not-applicable', 'error'] as const;

/** One of {@link VERDICTS}. */
export type Verdict = (typeof VERDICTS)[number];

/** A case's class (conformance/PROTOCOL.md §5): zero deviation, or stricter-only-if-declared. */
export type CaseClass = 'safety' | 'liveness';

/** A declaration's count of each verdict (JSON keys: `not-applicable` is `not_applicable`). */
export interface VerdictCounts {
  pass: number;
  fail: number;
  not_applicable: number;
  error: number;
}

/**
 * The count key of a verdict in a declaration.
 *
 * @example
 * verdictKey('not-applicable'); // 'not_applicable'
 */
export function verdictKey(v: Verdict): keyof VerdictCounts {
  return v === 'not-applicable' ? 'not_applicable' : v;
}

/**
 * Zero counts of every verdict.
 *
 * @example
 * const counts = { ...verdictCounts(), total: 3 };
 * counts[verdictKey('pass')]++;
 */
export function verdictCounts(): VerdictCounts {
  return { pass: 0, fail: 0, not_applicable: 0, error: 0 };
}
