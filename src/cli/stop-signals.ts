import { writeSync } from 'node:fs';
import { removeLiveTemps } from '../fs/durable-fs.js';

/** The signals that end a command from outside: Ctrl-C, a terminal closed, `kill`. */
const STOP_SIGNALS = ['SIGINT', 'SIGHUP', 'SIGTERM'] as const;

/**
 * While long work runs, says what it got done if a stop signal ends the process (`message()` is
 * asked at that moment; no `finally` runs then): one line on stderr or, with `json`, the error
 * object on stdout (`{"error": "Interrupted", "code": "INTERRUPTED", "message", "signal",
 * ...details}`), removes the temp files of the write in progress (it has not been renamed into
 * place, so the store stays as the last completed round left it), then lets the signal end the
 * process as it would have. Returns the function
 * that stops listening.
 *
 * @example
 * const forget = sayOnStop(() => ({ message: `import interrupted: ${done} of ${total} turn(s) written` }), false);
 * try { await work(); } finally { forget(); }
 */
export function sayOnStop(
  message: () => { message: string; details?: Record<string, unknown> },
  json: boolean,
): () => void {
  const onSignal = (signal: NodeJS.Signals): void => {
    forget();
    removeLiveTemps();
    const m = message();
    // Synchronous: the process ends right after.
    if (json) {
      const error = { error: 'Interrupted', code: 'INTERRUPTED', message: m.message, signal };
      writeSync(1, `${JSON.stringify({ ...error, ...m.details })}\n`);
    } else writeSync(2, `contextfold: ${m.message}\n`);
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const forget = (): void => {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  return forget;
}
