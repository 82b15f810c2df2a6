import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (where package.json is). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

let packed: string | null = null;

/** `npm pack` of the repository, once per test process, into a temp dir removed at exit. */
export function packOnce(): string {
  if (packed !== null) return packed;
  const dir = mkdtempSync(join(tmpdir(), 'cf-pack-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  execFileSync(
    'npm',
    [
      'pack',
      '--ignore-scripts',
      '--silent',
      '--offline',
      '--no-update-notifier',
      '--pack-destination',
      dir,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball in ${dir}`);
  packed = join(dir, tarball);
  return packed;
}

/** A packed-and-installed copy of contextfold, laid out as `npm install -g <tarball>` does. */
export interface InstalledCopy {
  /** `<prefix>/lib/node_modules/contextfold` (or the given package dir). */
  packageDir: string;
  /** `<packageDir>/dist/cli/bin.js`. */
  binPath: string;
  /** `<prefix>/bin`: holds a `contextfold` link to the entry point; put it on PATH. */
  binDir: string;
}

/**
 * Packs the repository (`npm pack`, exactly the files a user gets, without rebuilding dist/)
 * and unpacks it as an installed package under `prefix` (or at `packageDir`), with a
 * `contextfold` link in `<prefix>/bin`. Its dependencies resolve through a link to this
 * repository's node_modules (no network, no install).
 */
export function installedCopy(prefix: string, packageDir?: string): InstalledCopy {
  const tarball = packOnce();
  const dir = packageDir ?? join(prefix, 'lib', 'node_modules', 'contextfold');
  mkdirSync(dir, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1']);
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  const binPath = join(dir, 'dist', 'cli', 'bin.js');
  chmodSync(binPath, 0o755);
  const binDir = join(prefix, 'bin');
  mkdirSync(binDir, { recursive: true });
  symlinkSync(binPath, join(binDir, 'contextfold'));
  return { packageDir: dir, binPath, binDir };
}
