import { copyFileSync, existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { writeFileAtomic } from '../../fs/durable-fs.js';
import { makeDirs } from '../../fs/make-dirs.js';
import { UsageError } from '../../protocol/errors.js';
import { CLAUDE_EVENT_NAMES, HOOK_EVENTS, type HookEvent } from './hook-input.js';

/** Where the hooks go: the project's `.claude/settings.json` or the user's. */
export type InstallScope = 'project' | 'user';

/** Seconds Claude Code waits for each hook (a first run on a long session catches up in batches). */
export const HOOK_TIMEOUTS: Record<HookEvent, number> = {
  'user-prompt-submit': 15,
  'pre-compact': 60,
  'session-start': 15,
};

/** What happened to each event's hook. */
export type HookChange = 'added' | 'updated' | 'unchanged';

/** Result of {@link installClaudeCode}. */
export interface InstallResult {
  settings: string;
  /** Copy of the previous file, written only when the file changed. */
  backup: string | null;
  changed: boolean;
  hooks: Record<string, HookChange>;
}

/** Single-quotes a word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command that starts the CLI from a hook. Inside the project (an npm install), the path
 * is relative to `$CLAUDE_PROJECT_DIR`, so a committed project settings file works on every
 * checkout; otherwise it is absolute. `node` runs the entry directly (no npx start-up cost).
 *
 * @example
 * hookCommandBase({ binPath: '/repo/node_modules/contextfold/dist/cli/bin.js', projectDir: '/repo', scope: 'project' });
 * // 'node "$CLAUDE_PROJECT_DIR"/node_modules/contextfold/dist/cli/bin.js'
 */
export function hookCommandBase(options: {
  binPath: string;
  projectDir: string;
  scope: InstallScope;
}): string {
  const rel = relative(options.projectDir, options.binPath);
  if (options.scope === 'project' && rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep)) {
    return `node "$CLAUDE_PROJECT_DIR"/${shellQuote(rel.split(sep).join('/'))}`;
  }
  return `node ${shellQuote(options.binPath)}`;
}

/**
 * The full hook command for an event: `<base> [--dir DIR] hook <event>`.
 *
 * @example
 * hookCommand('contextfold', 'pre-compact', '.cf'); // 'contextfold --dir .cf hook pre-compact'
 */
export function hookCommand(base: string, event: HookEvent, dir?: string): string {
  return `${base}${dir === undefined ? '' : ` --dir ${shellQuote(dir)}`} hook ${event}`;
}

function isOurs(command: unknown, event: HookEvent, desired: string): boolean {
  if (typeof command !== 'string') return false;
  if (command === desired) return true;
  // The hook's own options may follow the event (`--no-redact`): still ours, updated in place.
  return (
    /contextfold|cli\/bin\.js/.test(command) &&
    new RegExp(`\\bhook\\s+${event}(?:\\s+--[\\w-]+)*\\s*$`).test(command)
  );
}

type Json = Record<string, unknown>;

/**
 * Merges the contextfold hooks into a settings object (a copy), keeping everything else:
 * an existing contextfold hook for an event is updated in place, never duplicated.
 *
 * @example
 * mergeHooks({}, (e) => `contextfold hook ${e}`).hooks; // { 'user-prompt-submit': 'added', ... }
 */
export function mergeHooks(
  settings: unknown,
  commandFor: (event: HookEvent) => string,
  where = 'settings.json',
): { settings: Json; hooks: Record<string, HookChange> } {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new UsageError(
      `${where}: expected a JSON object; fix or move the file, then install again`,
    );
  }
  const out = structuredClone(settings) as Json;
  if (
    out.hooks !== undefined &&
    (typeof out.hooks !== 'object' || out.hooks === null || Array.isArray(out.hooks))
  ) {
    throw new UsageError(`${where}: "hooks" must be an object; fix it, then install again`);
  }
  out.hooks ??= {};
  const hooks = out.hooks as Json;
  const changes: Record<string, HookChange> = {};
  for (const event of HOOK_EVENTS) {
    const name = CLAUDE_EVENT_NAMES[event];
    const desired = commandFor(event);
    if (hooks[name] !== undefined && !Array.isArray(hooks[name])) {
      throw new UsageError(
        `${where}: "hooks.${name}" must be an array; fix it, then install again`,
      );
    }
    hooks[name] ??= [];
    const groups = hooks[name] as unknown[];
    let change: HookChange = 'added';
    for (const g of groups) {
      const list = typeof g === 'object' && g !== null ? (g as Json).hooks : undefined;
      if (!Array.isArray(list)) continue;
      for (const h of list) {
        if (typeof h !== 'object' || h === null || !isOurs((h as Json).command, event, desired))
          continue;
        const hook = h as Json;
        if (change !== 'added') continue;
        if (
          hook.command === desired &&
          hook.type === 'command' &&
          hook.timeout === HOOK_TIMEOUTS[event]
        ) {
          change = 'unchanged';
        } else {
          Object.assign(hook, { type: 'command', command: desired, timeout: HOOK_TIMEOUTS[event] });
          change = 'updated';
        }
      }
    }
    if (change === 'added') {
      groups.push({
        hooks: [{ type: 'command', command: desired, timeout: HOOK_TIMEOUTS[event] }],
      });
    }
    changes[name] = change;
  }
  return { settings: out, hooks: changes };
}

/**
 * The settings file for a scope.
 *
 * @example
 * settingsPath({ scope: 'project', projectDir: '/repo', userDir: '/home/me/.claude' });
 * // '/repo/.claude/settings.json'
 */
export function settingsPath(options: {
  scope: InstallScope;
  projectDir: string;
  userDir: string;
}): string {
  return options.scope === 'user'
    ? join(options.userDir, 'settings.json')
    : join(options.projectDir, '.claude', 'settings.json');
}

/**
 * Installs the contextfold hooks (UserPromptSubmit, PreCompact, SessionStart) into a Claude Code
 * settings file. Idempotent: running it again changes nothing. The previous file is kept as
 * `settings.json.bak` whenever it changes; the new one is written atomically.
 *
 * @example
 * installClaudeCode({ scope: 'project', projectDir: process.cwd(), userDir: '~/.claude', command: 'contextfold' });
 */
export function installClaudeCode(options: {
  scope: InstallScope;
  projectDir: string;
  userDir: string;
  /** Base command that starts the CLI, e.g. from {@link hookCommandBase}. */
  command: string;
  /** A store directory to pass to every hook (default: `.contextfold` in the project). */
  dir?: string;
}): InstallResult {
  const path = settingsPath(options);
  const { before, current } = loadSettings(path, 'install');
  const merged = mergeHooks(current, (e) => hookCommand(options.command, e, options.dir), path);
  const text = `${JSON.stringify(merged.settings, null, 2)}\n`;
  const changed = before === null || Object.values(merged.hooks).some((c) => c !== 'unchanged');
  let backup: string | null = null;
  if (changed) backup = writeSettings(path, text, before !== null);
  return { settings: path, backup, changed, hooks: merged.hooks };
}

/** The settings file's text (null: no file) and its parsed content ({} for none or empty). */
function loadSettings(path: string, verb: string): { before: string | null; current: unknown } {
  if (!existsSync(path)) return { before: null, current: {} };
  const before = readSettings(path);
  try {
    return { before, current: before.trim() === '' ? {} : JSON.parse(before) };
  } catch {
    throw new UsageError(
      `${path} is not valid JSON; fix or move it, then ${verb} again (nothing was changed)`,
      { path },
    );
  }
}

/** Result of {@link uninstallClaudeCode}. */
export interface UninstallResult {
  settings: string;
  /** Copy of the previous file, written only when the file changed. */
  backup: string | null;
  changed: boolean;
  /** contextfold hooks removed, per Claude Code event name. */
  removed: Record<string, number>;
}

/**
 * The settings without the contextfold hooks (a copy): each hook `install` wrote (or one of its
 * command lines edited by hand) is removed, with the groups and event lists it leaves empty;
 * every other hook and setting is kept as it was.
 *
 * @example
 * removeHooks({ hooks: { PreCompact: [{ hooks: [{ type: 'command', command: 'contextfold hook pre-compact' }] }] } });
 * // { settings: {}, removed: { UserPromptSubmit: 0, PreCompact: 1, SessionStart: 0 } }
 */
export function removeHooks(settings: unknown): {
  settings: unknown;
  removed: Record<string, number>;
} {
  const removed: Record<string, number> = {};
  const out = structuredClone(settings) as Json;
  const hooks =
    typeof out === 'object' && out !== null ? (out.hooks as Json | undefined) : undefined;
  for (const event of HOOK_EVENTS) {
    const name = CLAUDE_EVENT_NAMES[event];
    removed[name] = 0;
    const groups = typeof hooks === 'object' && hooks !== null ? hooks[name] : undefined;
    if (!Array.isArray(groups)) continue;
    const kept = groups.filter((g) => {
      const list = typeof g === 'object' && g !== null ? (g as Json).hooks : undefined;
      if (!Array.isArray(list)) return true;
      const rest = list.filter(
        (h) => !(typeof h === 'object' && h !== null && isOurs((h as Json).command, event, '')),
      );
      removed[name]! += list.length - rest.length;
      (g as Json).hooks = rest;
      return rest.length > 0 || rest.length === list.length;
    });
    if (kept.length > 0 || groups.length === 0) hooks![name] = kept;
    else delete hooks![name];
  }
  if (hooks && Object.keys(hooks).length === 0 && Object.values(removed).some((n) => n > 0)) {
    delete out.hooks;
  }
  return { settings: out, removed };
}

/**
 * Removes the contextfold hooks from a Claude Code settings file (the inverse of
 * {@link installClaudeCode}). The previous file is kept as `settings.json.bak` when it changes;
 * a missing file or one without contextfold hooks is left untouched.
 *
 * @example
 * uninstallClaudeCode({ scope: 'project', projectDir: process.cwd(), userDir: '~/.claude' });
 */
export function uninstallClaudeCode(options: {
  scope: InstallScope;
  projectDir: string;
  userDir: string;
}): UninstallResult {
  const path = settingsPath(options);
  const { current } = loadSettings(path, 'uninstall');
  const { settings, removed } = removeHooks(current);
  const changed = Object.values(removed).some((n) => n > 0);
  const backup = changed
    ? writeSettings(path, `${JSON.stringify(settings, null, 2)}\n`, true)
    : null;
  return { settings: path, backup, changed, removed };
}

/** A file system error as a one-line usage error about the settings file (no stack trace). */
function settingsError(path: string, doing: string, e: unknown): UsageError {
  const code = (e as NodeJS.ErrnoException).code ?? 'error';
  return new UsageError(`cannot ${doing} ${path} (${code}); fix or move it, then install again`, {
    path,
  });
}

/** The settings text; a path that is a directory or unreadable is a usage error. */
function readSettings(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw settingsError(path, 'read', e);
  }
}

/**
 * Writes the settings atomically, the old file kept as `.bak` first; the backup's path. A
 * settings file that is a symlink (dotfiles kept in a repository) is written where it points:
 * the atomic rename would otherwise replace the link by a copy.
 */
function writeSettings(path: string, text: string, hadFile: boolean): string | null {
  const backup = hadFile ? `${path}.bak` : null;
  try {
    makeDirs(dirname(path));
    if (backup) copyFileSync(path, backup);
    writeFileAtomic(hadFile ? realpathSync(path) : path, text);
  } catch (e) {
    throw settingsError(path, 'write', e);
  }
  return backup;
}
