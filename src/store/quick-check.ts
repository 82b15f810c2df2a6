import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const betterSqlite3 = createRequire(import.meta.url).resolve('better-sqlite3');

// The worker is a script of its own (no module file to locate, from sources or from dist).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let result;
try {
  const db = new Database(workerData.path, { readonly: true, fileMustExist: true });
  try {
    result = String(db.pragma('quick_check', { simple: true }));
  } finally {
    db.close();
  }
} catch (e) {
  result = e.message;
}
parentPort.postMessage(result);
`;

/**
 * `PRAGMA quick_check` of an index file in a worker thread: it reads every page (seconds for a
 * large store), so a server's event loop keeps running meanwhile. Resolves to `'ok'`, to
 * SQLite's description of the first problems, or to null if the check could not run.
 *
 * @example
 * await quickCheck('/repo/.contextfold/index-3-0a1b2c3d.sqlite'); // 'ok'
 */
export function quickCheck(path: string): Promise<string | null> {
  return new Promise((resolve) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { path, module: betterSqlite3 },
      // Not the parent's flags (an --input-type or a test runner's loader would fail it).
      execArgv: [],
    });
    worker.once('message', (m: string) => resolve(m));
    // A check that cannot run says nothing about the index.
    worker.once('error', () => resolve(null));
    worker.once('exit', () => resolve(null));
  });
}
