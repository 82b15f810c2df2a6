/**
 * The items grouped by a key, groups in order of first appearance and items in input order
 * (`Map.groupBy`, which Node 20 does not have).
 *
 * @example
 * groupBy([{ t: 1 }, { t: 2 }, { t: 1 }], (e) => e.t); // Map { 1 => [{t:1},{t:1}], 2 => [{t:2}] }
 */
export function groupBy<T, K>(items: Iterable<T>, key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
