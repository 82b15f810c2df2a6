/** Steps below this are kept in a flat array (at most 8 MB); larger ids in a map. */
const FLAT_STEPS = 1 << 20;

/**
 * A map from step ids to values for lookups on a hot path: the step ids of a store are mostly
 * small and dense, so they index a flat array (a scan of a large store looks up thousands of
 * steps, which a `Map` of 100k entries made a visible share of its time). Ids of 2^20 and more
 * go to a `Map`.
 *
 * @example
 * const m = new StepMap<string>();
 * m.set(137, 'port');
 * m.get(137); // 'port'
 */
export class StepMap<V> {
  #flat: (V | undefined)[] = [];
  readonly #far = new Map<number, V>();

  get(step: number): V | undefined {
    return step < FLAT_STEPS ? this.#flat[step] : this.#far.get(step);
  }

  set(step: number, value: V): void {
    if (step >= FLAT_STEPS) {
      this.#far.set(step, value);
      return;
    }
    if (step >= this.#flat.length) {
      // Grown by copying into a preallocated array: its elements stay in fast (non-dictionary)
      // mode, which assigning far past the end of an array would not keep.
      const grown = new Array<V | undefined>(Math.min(FLAT_STEPS, Math.max(1024, 2 * step)));
      for (let i = 0; i < this.#flat.length; i++) grown[i] = this.#flat[i];
      this.#flat = grown;
    }
    this.#flat[step] = value;
  }
}
