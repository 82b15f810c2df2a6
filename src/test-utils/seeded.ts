// Reproducible timing for the crash tests: the same seed gives the same kill or stop moments.

/** A deterministic pseudo-random sequence in [0, 1) (a 32-bit linear congruential generator). */
export function seededRandom(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x * 1664525 + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
