/** Input of {@link dropOldest}. */
export interface DropOldestInput {
  /** Token cost of each item, oldest first. */
  costs: readonly number[];
  /** Tokens of the whole pack with every item in. */
  total: number;
  budget: number;
  /** Tokens that leave with the last item (a layer's frame, paid only when it is not empty). */
  lastExtra: number;
}

/**
 * How many of the oldest items to leave out so that `total` fits `budget` (all of them when it
 * never does), and the total then. One pass: each cost is read at most once.
 *
 * @example
 * dropOldest({ costs: [5, 5, 5], total: 20, budget: 12, lastExtra: 0 }); // { count: 2, total: 10 }
 */
export function dropOldest(input: DropOldestInput): { count: number; total: number } {
  const { costs, budget } = input;
  let total = input.total;
  let count = 0;
  while (total > budget && count < costs.length) {
    total -= costs[count]!;
    count++;
    if (count === costs.length) total -= input.lastExtra;
  }
  return { count, total };
}
