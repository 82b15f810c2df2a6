import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The directory of contextfold's own `package.json`, found by walking up from this module.
 * Files that ship with the package (guard tables, the conformance corpus, `dist/cli/bin.js`)
 * are located from it, never relative to the calling module: the CLI is bundled into a few
 * files in `dist/cli/`, so a module's own depth in the tree is not where its code runs from.
 *
 * @example
 * join(packageRoot(), 'guard'); // the shipped guard tables
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && isOurs(file)) {
      root = dir;
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`contextfold's package.json is not above ${import.meta.url}`);
    dir = up;
  }
}

function isOurs(file: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'contextfold';
  } catch {
    return false;
  }
}

/**
 * A path inside the package: `packagePath('dist', 'cli', 'bin.js')`.
 *
 * @example
 * packagePath('conformance', 'adapters', 'cases.v1.json');
 */
export function packagePath(...segments: string[]): string {
  return join(packageRoot(), ...segments);
}

/**
 * The package's `package.json` (read once).
 *
 * @example
 * packageJson().version; // '0.1.0'
 */
export function packageJson(): { name: string; version: string } {
  pkg ??= JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  return pkg;
}

let pkg: { name: string; version: string } | undefined;
