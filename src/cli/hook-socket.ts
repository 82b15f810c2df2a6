import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packagePath } from '../fs/package-root.js';

/** Environment variables a hook run may depend on: a server only serves the same ones. */
const ENV_KEYS = /^(CONTEXTFOLD_\w+|HOME|XDG_CACHE_HOME|TMPDIR)$/;

/**
 * The Unix socket of the hook server for this build of contextfold, this user and this
 * environment, or null when there is no private place for it. The name hashes the build (the
 * path and modification time of the code a server runs, so a rebuilt or upgraded copy never
 * talks to an old server) and the environment a run reads, so a server answers exactly as the
 * process Claude Code started would have. It lives in `$TMPDIR/contextfold-<uid>/`, which must
 * be a directory of this user that nobody else can enter (made so when missing).
 *
 * @example
 * hookSocketPath(process.env); // '/tmp/contextfold-1000/hook-3f2a….sock'
 */
export function hookSocketPath(env: NodeJS.ProcessEnv): string | null {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return null;
  const uid = process.getuid();
  const base = env.TMPDIR?.replace(/\/+$/, '') || tmpdir();
  const dir = join(base, `contextfold-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return null;
  }
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return null;
  const runner = packagePath('dist', 'cli', 'hook-request.js');
  const h = createHash('sha256');
  h.update(`${runner}\0${statSync(runner).mtimeMs}\0`);
  for (const key of Object.keys(env)
    .filter((k) => ENV_KEYS.test(k))
    .sort()) {
    h.update(`${key}=${env[key]}\0`);
  }
  // A Unix socket path must stay under about 100 bytes: the hash is cut to 24 hex digits.
  return join(dir, `hook-${h.digest('hex').slice(0, 24)}.sock`);
}
