import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packagePath } from '../fs/package-root.js';

/**
 * The longest Unix socket path the platform binds: `sun_path` less its final NUL (104 bytes on
 * macOS and the BSDs, 108 on Linux). The name's hash is cut to {@link HASH_DIGITS} hex digits to
 * leave room for TMPDIR.
 */
const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103;
const HASH_DIGITS = 24;
const SOCKET_NAME_SAMPLE = `hook-${'0'.repeat(HASH_DIGITS)}.sock`;

/** Environment variables a hook run may depend on: a server only serves the same ones. */
const ENV_KEYS = /^(CONTEXTFOLD_\w+|HOME|XDG_CACHE_HOME|TMPDIR)$/;

/**
 * The Unix socket of the hook server for this build of contextfold, this user and this
 * environment, or null when there is no private place for it. The name hashes the build (the
 * path, modification and change time of the code a server runs, so a rebuilt or upgraded copy
 * never talks to an old server: npm gives every installed file the tarball's fixed modification
 * time, 1985-10-26, but no installer can set the change time) and the environment a run reads,
 * so a server answers exactly as the process Claude Code started would have. `runner` is the
 * code that stands for the build (a test gives its own). It lives in `$TMPDIR/contextfold-<uid>/`, which must
 * be a directory of this user that nobody else can enter (made so when missing). A TMPDIR too
 * long for a socket path also means no server: every prompt then runs in its own process.
 *
 * @example
 * hookSocketPath(process.env); // '/tmp/contextfold-1000/hook-3f2a….sock'
 */
export function hookSocketPath(
  env: NodeJS.ProcessEnv,
  runner = packagePath('dist', 'cli', 'hook-request.js'),
): string | null {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return null;
  const uid = process.getuid();
  const base = env.TMPDIR?.replace(/\/+$/, '') || tmpdir();
  const dir = join(base, `contextfold-${uid}`);
  // Too long to bind: no server (rather than one started and failing on every prompt).
  if (Buffer.byteLength(join(dir, SOCKET_NAME_SAMPLE)) > MAX_SOCKET_PATH) return null;
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return null;
  }
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return null;
  const built = statSync(runner);
  const h = createHash('sha256');
  h.update(`${runner}\0${built.mtimeMs}\0${built.ctimeMs}\0`);
  for (const key of Object.keys(env)
    .filter((k) => ENV_KEYS.test(k))
    .sort()) {
    h.update(`${key}=${env[key]}\0`);
  }
  return join(dir, `hook-${h.digest('hex').slice(0, HASH_DIGITS)}.sock`);
}
