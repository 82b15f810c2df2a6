import { writeSync } from 'node:fs';

/** The signals that end a command from outside: Ctrl-C, a terminal closed, `kill`. */
const STOP_SIGNALS = ['SIGINT', 'SIGHUP', 'SIGTERM'] as const;

/**
 * While long work runs, says on stderr what it got done if a stop signal ends the process
 * (`line()` is asked at that moment; no `finally` runs then), then lets the signal end the
 * process as it would have. Returns the function that stops listening.
 *
 * @example
 * const forget = sayOnStop(() => `import interrupted: ${done} of ${total} turn(s) written`);
 * try { await work(); } finally { forget(); }
 */
export function sayOnStop(line: () => string): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    forget();
    // Synchronous: the process ends right after.
    writeSync(2, `contextfold: ${line()}\n`);
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const forget = (): void => {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  return forget;
}
