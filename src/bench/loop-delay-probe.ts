/** The `q`-quantile of `xs` (nearest rank, three decimals). */
export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(3));
}

/**
 * Runs `fn` measuring how late a 2 ms timer fires meanwhile (p99 and max, in ms, over `samples`
 * ticks): the delay a server's other requests would see. The wait from the last tick to the end
 * counts too (a loop blocked until the very end would otherwise record nothing). Also returns
 * `fn`'s wall time.
 */
export async function withLoopDelay<T>(
  fn: () => Promise<T>,
): Promise<[T, number, { p99: number; max: number; samples: number }]> {
  const TICK = 2;
  const delays: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    delays.push(Math.max(0, now - last - TICK));
    last = now;
  }, TICK);
  const t = performance.now();
  const r = await fn();
  const ms = performance.now() - t;
  clearInterval(timer);
  delays.push(Math.max(0, performance.now() - last - TICK));
  const delay = {
    p99: Number(quantile(delays, 0.99).toFixed(1)),
    max: Number(Math.max(...delays).toFixed(1)),
    samples: delays.length,
  };
  return [r, ms, delay];
}
