import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/**
 * The Python reference engine (`contextfold.py` of the IPCF specification repository), run
 * beside ours on the same store: its `validate`, `hydrate` and `scan` as fresh processes. It is
 * not shipped with contextfold and cannot be installed from a registry here; a user who has a
 * copy points at it with `--reference-engine PATH` or `$CONTEXTFOLD_REFERENCE_ENGINE`.
 */

/** The environment variable naming the reference engine's script. */
export const REFERENCE_ENGINE_ENV = 'CONTEXTFOLD_REFERENCE_ENGINE';

/**
 * The reference engine's script, from an explicit path or the environment; undefined when
 * neither names one. A path that is given but missing is an error, not a silent skip.
 *
 * @example
 * const script = referenceEngine(process.env.CONTEXTFOLD_REFERENCE_ENGINE);
 */
export function referenceEngine(explicit?: string): string | undefined {
  const path = explicit || process.env[REFERENCE_ENGINE_ENV] || undefined;
  if (path === undefined) return undefined;
  const abs = resolve(path);
  if (!existsSync(abs)) {
    throw new Error(
      `the reference engine ${abs} does not exist: point --reference-engine (or ${REFERENCE_ENGINE_ENV}) at contextfold.py`,
    );
  }
  return abs;
}

/** One run of the reference engine. */
export interface ReferenceRun {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs the reference engine on a store. It only knows the store `.contextfold` in its working
 * directory, so `storeDir` must be named that, and it runs in its parent.
 *
 * @example
 * const r = runReference({ script, storeDir: '/tmp/work/.contextfold', args: ['validate'] });
 * r.status; // 0 when every node verified
 */
export function runReference(options: {
  script: string;
  storeDir: string;
  args: readonly string[];
}): ReferenceRun {
  if (basename(options.storeDir) !== '.contextfold') {
    throw new Error(
      `the reference engine reads only a store named .contextfold, not ${options.storeDir}`,
    );
  }
  const t = performance.now();
  const r = spawnSync('python3', [options.script, ...options.args], {
    cwd: dirname(options.storeDir),
    encoding: 'utf8',
    env: { ...process.env, PYTHONIOENCODING: 'utf-8', PYTHONUTF8: '1' },
    maxBuffer: 256 * 1024 * 1024,
  });
  const ms = performance.now() - t;
  if (r.error) throw new Error(`could not run python3 ${options.script}: ${r.error.message}`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms };
}

/** The separator the reference's `hydrate` prints around a page (60 box-drawing dashes). */
const RULE = '\u2500'.repeat(60);

/**
 * The page the reference's `hydrate` printed (between its two rules; `print` adds the final
 * newline), or undefined when its output has no page.
 *
 * @example
 * hydratedContent(runReference({ script, storeDir, args: ['hydrate', '137'] }).stdout);
 */
export function hydratedContent(stdout: string): string | undefined {
  const open = stdout.indexOf(`${RULE}\n`);
  const close = stdout.lastIndexOf(`\n${RULE}\n`);
  if (open < 0 || close < open + RULE.length) return undefined;
  return stdout.slice(open + RULE.length + 1, close);
}

/**
 * What the reference's `hydrate` shows of a payload: at most `maxTokens × 4` code points (its
 * estimator is code points / 4, and it truncates at that many).
 *
 * @example
 * referencePage('x'.repeat(20000), 3000).length; // 12000
 */
export function referencePage(payload: string, maxTokens: number): string {
  const points = [...payload];
  return Math.max(1, Math.floor(points.length / 4)) > maxTokens
    ? points.slice(0, maxTokens * 4).join('')
    : payload;
}
