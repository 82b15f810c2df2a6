/** An optional peer (an SDK) a subject drives, loaded once, on first use. */
export interface OptionalPeer<T> {
  /** Why the subject cannot run (the peer is not installed), or null. */
  unavailable(): Promise<string | null>;
  /** The loaded modules; throws the `unavailable` reason when the peer is missing. */
  modules(): Promise<T>;
}

/**
 * Loads an optional peer lazily; a missing one makes the subject unavailable with `missing`
 * (what to install) instead of failing the run.
 *
 * @example
 * const ai = optionalPeer(() => import('ai'), 'the AI SDK is not installed: npm install ai');
 * if (await ai.unavailable()) return;
 */
export function optionalPeer<T>(load: () => Promise<T>, missing: string): OptionalPeer<T> {
  let loaded: Promise<{ ok: true; value: T } | { ok: false }> | null = null;
  const get = () => {
    loaded ??= load().then(
      (value) => ({ ok: true as const, value }),
      () => ({ ok: false as const }),
    );
    return loaded;
  };
  return {
    async unavailable() {
      return (await get()).ok ? null : missing;
    },
    async modules() {
      const m = await get();
      if (!m.ok) throw new Error(missing);
      return m.value;
    },
  };
}
