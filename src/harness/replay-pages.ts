import type { HydrateOptions, HydrateResult } from '../engine/types.js';

/** Characters of page content a {@link ReplayPages} keeps at most (about 8 MB of strings). */
export const REPLAY_PAGES_MAX_CHARS = 4 * 1024 * 1024;

/**
 * The pages one replay hydrated, by step and hydrate options (window, or cap and chunk): a node
 * a session paged in over many turns with the same window is read from its file and verified
 * once per replay, and the later turns get a copy of that verified result (the replay still
 * checks its hashes against each turn's recorded event). A failed hydration is not kept.
 * Bounded by the characters of the contents it keeps: the least recently used go first.
 *
 * @example
 * const pages = new ReplayPages();
 * const h = await pages.hydrate(7, { maxTokens: 400 }, (s, o) => engine.hydrate(s, o));
 */
export class ReplayPages {
  private readonly kept = new Map<string, HydrateResult>();
  private chars = 0;

  constructor(private readonly maxChars: number = REPLAY_PAGES_MAX_CHARS) {}

  /** The hydration of `step` with `options`: kept from an earlier turn, or `hydrate`'s. */
  async hydrate(
    step: number,
    options: HydrateOptions,
    hydrate: (step: number, options: HydrateOptions) => Promise<HydrateResult>,
  ): Promise<HydrateResult> {
    const key = `${step} ${JSON.stringify(options)}`;
    let h = this.kept.get(key);
    if (h) {
      this.kept.delete(key);
    } else {
      h = await hydrate(step, options);
      this.chars += h.content.length;
    }
    this.kept.set(key, h);
    for (const [k, old] of this.kept) {
      if (this.chars <= this.maxChars) break;
      this.kept.delete(k);
      this.chars -= old.content.length;
    }
    return { ...h, findings: h.findings.map((f) => ({ ...f })) };
  }

  /** How many hydrations are kept (for tests). */
  get size(): number {
    return this.kept.size;
  }
}
