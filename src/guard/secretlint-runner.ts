import { lintSource } from '@secretlint/core';
import { rules as recommendedRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { MatchSpan } from './matchers.js';
import type { Matcher } from './table-schema.js';

type SecretlintMatcher = Extract<Matcher, { kind: 'secretlint' }>;
// Types of the core API, taken from it (`@secretlint/types` is not a direct dependency).
type LintInput = Parameters<typeof lintSource>[0];
type SecretLintCoreConfig = LintInput['options']['config'];
type SecretLintRawSource = LintInput['source'];
type ConfigRule = SecretLintCoreConfig['rules'][number];
type RuleCreator = (typeof recommendedRules)[number];
type ReportDescriptor = Parameters<Parameters<RuleCreator['create']>[0]['report']>[0];

const creators = new Map(recommendedRules.map((r) => [r.meta.id, r]));

/** A message as a rule reported it. */
interface Report {
  ruleId: string;
  messageId: string;
  data: unknown;
  range: readonly number[];
}

/** `creator` with its reports handed to `sink` instead of the context `lintSource` gives it. */
function reportingTo(
  creator: RuleCreator,
  sink: (ruleId: string, report: ReportDescriptor) => void,
): RuleCreator {
  return {
    ...creator,
    create: (context, options) =>
      creator.create({ ...context, report: (d) => sink(creator.meta.id, d) }, options),
  };
}

/** A secretlint finding mapped back to the table pattern whose message it is. */
export interface SecretlintHit extends MatchSpan {
  /** Index of the pattern in the list given to {@link SecretlintRunner}. */
  pattern: number;
}

/**
 * Runs the secretlint rules a table names, through `@secretlint/core`'s `lintSource`, and maps
 * each reported message to its table pattern by (rule, message id). Messages no pattern names
 * are dropped, and rules no pattern names never run (the preset's `filter-comments` rule in
 * particular: a `secretlint-disable` comment inside a payload must not switch redaction off).
 *
 * The rules report to this runner, not to `lintSource`: its clean-up compares every message
 * with every later one (a duplicate filter), so 256 KB of AWS key ids took 95 s. Here a report
 * costs one map entry; duplicates (same range and message) are dropped as secretlint drops them.
 *
 * @example
 * const runner = new SecretlintRunner([githubMatcher]);
 * await runner.run(text, [0]); // [{ start, end, pattern: 0 }]
 */
export class SecretlintRunner {
  readonly #matchers: readonly SecretlintMatcher[];
  readonly #rules = new Map<string, ConfigRule[]>();

  constructor(matchers: readonly SecretlintMatcher[]) {
    for (const m of matchers) {
      if (!creators.has(m.rule)) throw new Error(`unknown secretlint rule ${m.rule}`);
    }
    this.#matchers = matchers;
  }

  /** The rules of the given patterns (their options merged), each once. */
  #ruleList(patterns: readonly number[]): ConfigRule[] {
    const ruleIds = [...new Set(patterns.map((i) => this.#matchers[i]!.rule))].sort();
    const key = ruleIds.join('\n');
    let rules = this.#rules.get(key);
    if (!rules) {
      rules = ruleIds.map((id) => {
        const options: Record<string, unknown> = {};
        for (const m of this.#matchers) if (m.rule === id) Object.assign(options, m.options);
        return { id, rule: creators.get(id)!, options };
      });
      this.#rules.set(key, rules);
    }
    return rules;
  }

  /** Runs the rules of `patterns` (indices into the matcher list) over `text`. */
  async run(text: string, patterns: readonly number[]): Promise<SecretlintHit[]> {
    if (patterns.length === 0) return [];
    // secretlint drops a leading BOM and reports ranges without it; keep ours on `text`.
    const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
    const content = bom ? text.slice(1) : text;
    const source = { content, ext: '.txt', contentType: 'text' } as SecretLintRawSource;
    // By range and message: a later equal report replaces an earlier one, as in secretlint.
    const reports = new Map<string, Report>();
    const sink = (ruleId: string, d: ReportDescriptor) => {
      const { message, messageId, data } = d.message;
      reports.set(`${d.range[0]},${d.range[1]},${message}`, {
        ruleId,
        messageId,
        data,
        range: d.range,
      });
    };
    const rules = this.#ruleList(patterns).map((r) => ({
      ...r,
      rule: reportingTo(r.rule as RuleCreator, sink),
    }));
    await lintSource({
      source,
      options: { config: { rules }, locale: 'en', noPhysicFilePath: true },
    });
    const hits: SecretlintHit[] = [];
    for (const msg of reports.values()) {
      const index = this.#matchers.findIndex(
        (m) => m.rule === msg.ruleId && m.message_id === msg.messageId,
      );
      if (index < 0) continue;
      const data = msg.data as Record<string, unknown> | undefined;
      const span = locate(content, msg.range, data?.[this.#matchers[index]!.value]);
      if (span) hits.push({ start: span.start + bom, end: span.end + bom, pattern: index });
    }
    return hits.sort((a, b) => a.start - b.start || a.end - b.end || a.pattern - b.pattern);
  }
}

/**
 * The span of a reported secret. Several rules report a range that starts at the whole match
 * but is as long as the captured value (the AWS secret key, the npm tokens), so the value from
 * the message data is looked up from the range start; the range is the fallback.
 */
export function locate(
  content: string,
  range: readonly number[],
  value: unknown,
): MatchSpan | null {
  const [from, to] = range as [number, number];
  if (typeof value === 'string' && value.length > 0) {
    const at = content.indexOf(value, from);
    if (at >= 0 && at <= to) return { start: at, end: at + value.length };
  }
  return to > from ? { start: from, end: to } : null;
}
