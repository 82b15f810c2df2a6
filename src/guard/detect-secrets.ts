import { decodeAsciiEscapes } from './ascii-escapes.js';
import type { MatchSpan } from './matchers.js';
import type { SecretlintRunner } from './secretlint-runner.js';
import type { CompiledPattern, GuardTables } from './tables.js';

/** One secret found in a text: the pattern and its UTF-16 span. */
export interface SecretHit extends MatchSpan {
  pattern: CompiledPattern;
}

/** Options of {@link SecretDetector}. */
export interface SecretDetectorOptions {
  /**
   * Run a pattern only on text its trigger matches (default true). Off, every matcher (and
   * secretlint) runs on every text: same findings, slower; benchmarks and tests compare the two.
   */
  prefilter?: boolean;
}

/**
 * Finds secrets with the patterns of the secrets table: the contextfold matchers directly, the
 * secretlint ones in one `lintSource` call running only the rules whose trigger matched.
 * Deterministic: hits come back sorted by start, longest first, then table order.
 *
 * @example
 * const d = new SecretDetector(loadGuardTables());
 * const hits = await d.detect('token ghp_…');
 */
export class SecretDetector {
  readonly #own: CompiledPattern[] = [];
  readonly #viaSecretlint: CompiledPattern[] = [];
  /** secretlint and its rules load on the first text a secretlint trigger matches. */
  #runner: Promise<SecretlintRunner> | null = null;
  readonly #prefilter: boolean;
  readonly #order: Map<CompiledPattern, number>;
  /** One pass for every flag-less trigger: most texts match none, and skip them all at once. */
  readonly #anyPlainTrigger: RegExp | null;

  constructor(tables: GuardTables, options: SecretDetectorOptions = {}) {
    const secrets = tables.patterns.filter((p) => p.kind === 'secrets');
    this.#order = new Map(secrets.map((p, i) => [p, i]));
    for (const p of secrets) {
      if (p.match) this.#own.push(p);
      else if (p.matcher.kind === 'secretlint') this.#viaSecretlint.push(p);
      // `repeated-value` depends on what the others removed: the Redactor applies it.
    }
    this.#prefilter = options.prefilter ?? true;
    const plain = secrets.filter((p) => p.trigger !== null && p.trigger.flags === '');
    this.#anyPlainTrigger =
      plain.length > 0 ? new RegExp(plain.map((p) => `(?:${p.trigger!.source})`).join('|')) : null;
  }

  #secretlint(): Promise<SecretlintRunner> {
    this.#runner ??= import('./secretlint-runner.js').then(
      (m) =>
        new m.SecretlintRunner(
          this.#viaSecretlint.map(
            (p) => p.matcher as Extract<typeof p.matcher, { kind: 'secretlint' }>,
          ),
        ),
    );
    return this.#runner;
  }

  #triggered(p: CompiledPattern, text: string, anyPlain: boolean): boolean {
    if (!this.#prefilter || p.trigger === null) return true;
    if (p.trigger.flags === '' && !anyPlain) return false;
    return p.trigger.test(text);
  }

  /**
   * Every secret in `text`, overlapping hits included (redaction merges them). A text holding
   * `\u` escapes of ASCII characters is also read decoded, and what is found there is mapped
   * back to the escaped bytes (see {@link decodeAsciiEscapes}).
   */
  async detect(text: string): Promise<SecretHit[]> {
    const hits = await this.#detect(text);
    const view = decodeAsciiEscapes(text);
    if (view) {
      const seen = new Set(hits.map((h) => `${h.start},${h.end},${this.#order.get(h.pattern)}`));
      for (const h of await this.#detect(view.text)) {
        const start = view.origin[h.start]!;
        const end = view.origin[h.end]!;
        if (!seen.has(`${start},${end},${this.#order.get(h.pattern)}`)) {
          hits.push({ start, end, pattern: h.pattern });
        }
      }
    }
    const order = this.#order;
    return hits.sort(
      (a, b) => a.start - b.start || b.end - a.end || order.get(a.pattern)! - order.get(b.pattern)!,
    );
  }

  async #detect(text: string): Promise<SecretHit[]> {
    const hits: SecretHit[] = [];
    const anyPlain = !this.#prefilter || (this.#anyPlainTrigger?.test(text) ?? false);
    for (const p of this.#own) {
      if (!this.#triggered(p, text, anyPlain)) continue;
      for (const s of p.match!(text)) hits.push({ ...s, pattern: p });
    }
    const run: number[] = [];
    this.#viaSecretlint.forEach((p, i) => {
      if (this.#triggered(p, text, anyPlain)) run.push(i);
    });
    if (run.length > 0) {
      for (const h of await (await this.#secretlint()).run(text, run)) {
        hits.push({ start: h.start, end: h.end, pattern: this.#viaSecretlint[h.pattern]! });
      }
    }
    return hits;
  }
}
