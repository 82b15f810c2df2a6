import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join, sep } from 'node:path';
import { UsageError } from '../../protocol/errors.js';
import { hookCommandBase, type InstallScope, shellQuote } from './install.js';

/**
 * How a copy of the contextfold CLI is laid out on disk, which decides whether a hook may run
 * it: settings.json outlives the shell that installed the hooks.
 * - `installed`: a package copy inside a `node_modules` (a project dependency, or a global
 *   install from a tarball or git URL). It stays until it is uninstalled.
 * - `npx-cache`: npx's cache (`~/.npm/_npx/<hash>/…`), which npm clears at any time.
 * - `source`: a source checkout (a clone, `npm link`, `npm install -g .`, which links): its
 *   `dist/` is rebuilt in place by `npm run build` and `npm test`.
 */
export type RuntimeKind = 'installed' | 'npx-cache' | 'source';

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Classifies the CLI entry point at `binPath` (links resolved).
 *
 * @example
 * runtimeKind('/usr/lib/node_modules/contextfold/dist/cli/bin.js'); // 'installed'
 */
export function runtimeKind(binPath: string): RuntimeKind {
  const parts = realpathOrSelf(binPath).split(sep);
  if (parts.includes('_npx')) return 'npx-cache';
  return parts.includes('node_modules') ? 'installed' : 'source';
}

/** The first executable `name` on a PATH string, or null. */
export function findOnPath(name: string, pathEnv: string | undefined): string | null {
  for (const dir of (pathEnv ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return null;
}

/** The package root of a CLI entry point `…/dist/cli/bin.js`. */
function packageRoot(binPath: string): string {
  return dirname(dirname(dirname(realpathOrSelf(binPath))));
}

const NPX_CACHE = /[\\/]_npx[\\/]/;

/** Options of {@link resolveHookCommand}. */
export interface HookRuntimeOptions {
  /** The entry point of the CLI doing the install (`…/dist/cli/bin.js`). */
  binPath: string;
  projectDir: string;
  scope: InstallScope;
  /** `PATH` to look for an installed `contextfold` on (when this CLI runs from a checkout). */
  pathEnv: string | undefined;
  /** An explicit base command (`--command`): used as given, unless it runs from npx's cache. */
  command?: string;
  /** For the message that tells how to install a copy. */
  version: string;
}

/** The base command the hooks run, and where it was found. */
export interface HookRuntime {
  command: string;
  source: 'given' | 'this-installation' | 'path';
}

/**
 * Chooses the command the Claude Code hooks run so that it survives: an installed copy (this
 * one, or the `contextfold` on PATH when this CLI runs from a source checkout), never npx's
 * cache and never a checkout's `dist/`, which builds rewrite while a hook may be running.
 * Throws a {@link UsageError} that says what to install otherwise.
 *
 * @example
 * resolveHookCommand({ binPath, projectDir: process.cwd(), scope: 'project', pathEnv: process.env.PATH, version: '0.1.0' });
 * // { command: 'node "$CLAUDE_PROJECT_DIR"/node_modules/contextfold/dist/cli/bin.js', source: 'this-installation' }
 */
export function resolveHookCommand(options: HookRuntimeOptions): HookRuntime {
  const { binPath, projectDir, scope, pathEnv, command, version } = options;
  if (command !== undefined) {
    if (NPX_CACHE.test(command)) {
      throw new UsageError(
        `--command runs contextfold from npx's cache, which npm clears at any time: install contextfold (npm install -g ./contextfold-${version}.tgz, or as a project dependency) and give that command`,
      );
    }
    return { command, source: 'given' };
  }
  const kind = runtimeKind(binPath);
  if (kind === 'installed') {
    return {
      command: hookCommandBase({ binPath, projectDir, scope }),
      source: 'this-installation',
    };
  }
  if (kind === 'npx-cache') {
    throw new UsageError(
      `contextfold is running from npx's cache (${packageRoot(binPath)}), which npm clears at any time, so hooks pointing there would stop working: install it (npm install --save-dev <tarball or git URL> in the project, or npm install -g <tarball>), then run contextfold install claude-code again, or pass --command CMD`,
    );
  }
  const onPath = findOnPath('contextfold', pathEnv);
  if (onPath !== null && runtimeKind(onPath) === 'installed') {
    return { command: shellQuote(onPath), source: 'path' };
  }
  const root = packageRoot(binPath);
  throw new UsageError(
    `contextfold runs from a source checkout (${root}) whose dist/ is rebuilt by npm run build and npm test, and no installed contextfold is on PATH: install a copy first (cd ${shellQuote(root)} && npm pack && npm install -g ./contextfold-${version}.tgz), then run contextfold install claude-code again, or pass --command CMD`,
  );
}
