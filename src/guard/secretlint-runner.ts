import { lintSource } from '@secretlint/core';
import { rules as recommendedRules } from '@secretlint/secretlint-rule-preset-recommend';
import type { MatchSpan } from './matchers.js';
import type { Matcher } from './table-schema.js';

type SecretlintMatcher = Extract<Matcher, { kind: 'secretlint' }>;
// Types of the core API, taken from it (`@secretlint/types` is not a direct dependency).
type LintInput = Parameters<typeof lintSource>[0];
type SecretLintCoreConfig = LintInput['options']['config'];
type SecretLintRawSource = LintInput['source'];

const creators = new Map(recommendedRules.map((r) => [r.meta.id, r]));

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
 * @example
 * const runner = new SecretlintRunner([githubMatcher]);
 * await runner.run(text, [0]); // [{ start, end, pattern: 0 }]
 */
export class SecretlintRunner {
  readonly #matchers: readonly SecretlintMatcher[];
  readonly #configs = new Map<string, SecretLintCoreConfig>();

  constructor(matchers: readonly SecretlintMatcher[]) {
    for (const m of matchers) {
      if (!creators.has(m.rule)) throw new Error(`unknown secretlint rule ${m.rule}`);
    }
    this.#matchers = matchers;
  }

  /** The config running exactly the rules of the given patterns (their options merged). */
  #config(patterns: readonly number[]): SecretLintCoreConfig {
    const ruleIds = [...new Set(patterns.map((i) => this.#matchers[i]!.rule))].sort();
    const key = ruleIds.join('\n');
    let config = this.#configs.get(key);
    if (!config) {
      config = {
        rules: ruleIds.map((id) => {
          const options: Record<string, unknown> = {};
          for (const m of this.#matchers) if (m.rule === id) Object.assign(options, m.options);
          return { id, rule: creators.get(id)!, options };
        }),
      };
      this.#configs.set(key, config);
    }
    return config;
  }

  /** Runs the rules of `patterns` (indices into the matcher list) over `text`. */
  async run(text: string, patterns: readonly number[]): Promise<SecretlintHit[]> {
    if (patterns.length === 0) return [];
    // secretlint drops a leading BOM and reports ranges without it; keep ours on `text`.
    const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
    const content = bom ? text.slice(1) : text;
    const source = { content, ext: '.txt', contentType: 'text' } as SecretLintRawSource;
    const result = await lintSource({
      source,
      options: { config: this.#config(patterns), locale: 'en', noPhysicFilePath: true },
    });
    const hits: SecretlintHit[] = [];
    for (const msg of result.messages) {
      const index = this.#matchers.findIndex(
        (m) => m.rule === msg.ruleId && m.message_id === msg.messageId,
      );
      if (index < 0) continue;
      const data = msg.data as Record<string, unknown> | undefined;
      const span = locate(content, msg.range, data?.[this.#matchers[index]!.value]);
      if (span) hits.push({ start: span.start + bom, end: span.end + bom, pattern: index });
    }
    return hits;
  }
}

/**
 * The span of a reported secret. Several rules report a range that starts at the whole match
 * but is as long as the captured value (the AWS secret key, the npm tokens), so the value from
 * the message data is looked up from the range start; the range is the fallback.
 */
function locate(content: string, range: readonly number[], value: unknown): MatchSpan | null {
  const [from, to] = range as [number, number];
  if (typeof value === 'string' && value.length > 0) {
    const at = content.indexOf(value, from);
    if (at >= 0 && at <= to) return { start: at, end: at + value.length };
  }
  return to > from ? { start: from, end: to } : null;
}
