/**
 * Runs async work one piece at a time, in call order, whatever the previous piece's outcome:
 * a store's operations that must not interleave inside one process (the inter-process lock
 * is taken inside them).
 *
 * @example
 * const queue = new SerialQueue();
 * await queue.run(async () => writeSomething());
 */
export class SerialQueue {
  #tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn, fn);
    this.#tail = result.then(
      () => {},
      () => {},
    );
    return result;
  }

  /** Resolves once everything queued so far has settled. */
  idle(): Promise<void> {
    return this.#tail;
  }
}
