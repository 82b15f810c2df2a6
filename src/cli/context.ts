import { resolve } from 'node:path';
import type { Command } from 'commander';
import {
  type ContextFoldError,
  exitCodeFor,
  ipcfErrorName,
  isContextFoldError,
  StoreNotFoundError,
  UsageError,
} from '../protocol/errors.js';
import { assertNotAFile, storeExists } from '../store/layout.js';
import { isPgUrl } from '../store/pg/pg-url.js';

/** Global options every command sees. */
export interface GlobalOptions {
  /** The store: an absolute directory, or a `postgres://` URL (from `--store`). */
  dir: string;
  json: boolean;
}

/**
 * Reads the global options from any (sub)command. The store is `--store`, else
 * `$CONTEXTFOLD_STORE`, else `--dir` (default `.contextfold`).
 */
export function globals(cmd: Command): GlobalOptions {
  const o = cmd.optsWithGlobals() as { dir?: string; store?: string; json?: boolean };
  const env = process.env.CONTEXTFOLD_STORE;
  const explicitDir = cmdSource(cmd, 'dir') === 'cli';
  // Both on one command line name two stores: which one was meant is not ours to guess.
  if (explicitDir && o.store !== undefined) {
    throw new UsageError('give --store or --dir, not both (they name the same thing)');
  }
  const store = o.store ?? (explicitDir || !env ? undefined : env);
  if (store !== undefined && store.length === 0) {
    throw new UsageError('--store needs a directory or a postgres:// URL');
  }
  // An empty --dir (an unset shell variable) would otherwise be the working directory itself.
  if (o.dir === '') throw new UsageError('--dir needs a directory (it was empty)');
  const dir = store ?? o.dir ?? '.contextfold';
  if (isPgUrl(dir)) return { dir, json: Boolean(o.json) };
  refuseOtherUrl(dir);
  return { dir: resolve(dir), json: Boolean(o.json) };
}

const URL_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*:)\/\//;

/**
 * A command argument that names a directory (`export --to`, `import-store DIR`), resolved. A URL
 * there would be taken as a relative path (`./postgres:/…`); it is refused with `instead`, the
 * command that does take one. The URL is not quoted: it may carry a password.
 */
export function directoryArg(value: string, what: string, instead: string): string {
  if (URL_SCHEME.test(value))
    throw new UsageError(`${what} takes a directory, not a URL: ${instead}`);
  return resolve(value);
}

/**
 * A URL of another scheme (`mysql://…`, `sqlite:///…`) is a mistake, not a directory: taken as
 * a path it would create `./mysql:/…` in the working directory. Only the scheme is quoted, so a
 * password in the URL never reaches the message.
 */
function refuseOtherUrl(dir: string): void {
  const scheme = URL_SCHEME.exec(dir)?.[1];
  if (scheme === undefined) return;
  throw new UsageError(
    `unsupported store URL scheme '${scheme}': give a directory or a postgres:// URL`,
  );
}

/** Where an option's value came from (`cli`, `env`, `default`…), looking up the parents. */
function cmdSource(cmd: Command, name: string): string | undefined {
  for (let c: Command | null = cmd; c; c = c.parent) {
    const src = c.getOptionValueSource(name);
    if (src !== undefined && c.options.some((opt) => opt.attributeName() === name)) return src;
  }
  return undefined;
}

/** Writes a result: one JSON object with `--json`, else the human rendering. */
export function emit(g: GlobalOptions, result: unknown, human: (r: never) => string): void {
  if (g.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    const text = human(result as never);
    if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
}

/** Set by a command that wants a non-zero exit without an error (e.g. validate found problems). */
export function setExitCode(code: number): void {
  process.exitCode = code;
}

/** Error codes of a full disk: the machine's state, not a bug (`SQLITE_FULL` from the index). */
const DISK_FULL = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/**
 * A full disk (or quota) as a usage error that says what to do; null for any other error. The
 * disk error may be the `cause` of another (an index file that could not be created on a full
 * disk is reported as not usable, its cause `SQLITE_FULL`): the first full-disk error of the
 * chain is reported.
 */
function diskFull(e: unknown): UsageError | null {
  for (let err = e, depth = 0; err instanceof Error && depth < 8; err = err.cause, depth++) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string' || !DISK_FULL.has(code)) continue;
    return new UsageError(
      `${err.message.replace(/^E[A-Z]+: /, '')} (${code}): the disk is full; free some space, then run again`,
    );
  }
  return null;
}

/**
 * A library error's message as the CLI says it: the option it names (`details.option`, written
 * `dir` in the message) becomes the flag that sets it (--dir).
 */
function flagsNamed(err: ContextFoldError): string {
  const option = err.details.option;
  return typeof option === 'string' && /^[a-z]+$/.test(option)
    ? err.message.replaceAll(`\`${option}\``, `--${option}`)
    : err.message;
}

/**
 * Reports an error and returns the exit code. Without `--json`: one line on stderr. With
 * `--json`: one JSON object on stdout (`{ error, code, message, ...details }`), the same place a
 * result would be, so a script reads one object either way and the exit code tells which.
 * Unknown errors (bugs) keep their stack (on stderr, or in the object's `stack`); user errors
 * never do, nor does a full disk. `stderr` is where the line goes (the hook server sends it to its client).
 */
export function reportError(
  e: unknown,
  json: boolean,
  stderr: (text: string) => void = (t) => process.stderr.write(t),
): number {
  const full = diskFull(e);
  if (full) return reportError(full, json, stderr);
  if (isContextFoldError(e)) {
    const err = e as ContextFoldError;
    const message = flagsNamed(err);
    if (json) {
      process.stdout.write(
        `${JSON.stringify({ error: ipcfErrorName(err.code), code: err.code, message, ...err.details })}\n`,
      );
    } else {
      stderr(`contextfold: ${ipcfErrorName(err.code)}: ${message}\n`);
    }
    return exitCodeFor(err.code);
  }
  const message = e instanceof Error ? e.message : String(e);
  const stack = e instanceof Error ? (e.stack ?? e.message) : String(e);
  if (json) {
    process.stdout.write(
      `${JSON.stringify({ error: 'InternalError', code: 'INTERNAL', message: `internal error (please report): ${message}`, stack })}\n`,
    );
  } else {
    stderr(`contextfold: internal error (please report): ${stack}\n`);
  }
  return 70;
}

/**
 * Refuses a directory that holds no store: read commands say so instead of reporting an empty
 * store (what a mistyped `--dir` would otherwise look like). `fold`, `import`, `session` and the
 * hook create the store; every other store command calls this (through `withEngine`).
 */
export function requireStore(dir: string): void {
  // A database store is checked when it is opened (mustExist): that needs a connection.
  if (isPgUrl(dir)) return;
  if (!storeExists(dir)) {
    throw new StoreNotFoundError(
      `no store at ${dir}: run contextfold fold … or contextfold import … to create one, or pass --dir DIR`,
      { path: dir },
    );
  }
}

/**
 * Refuses, before it starts, a server whose store directory is a file: `mcp --create` and the
 * proxy open their stores on the first call, and would otherwise fail every call instead.
 */
export function requireDirectory(dir: string): void {
  if (!isPgUrl(dir)) assertNotAFile(dir);
}

/** Parses a non-negative integer argument or throws a one-line usage error. */
export function parseIntArg(value: string, what: string): number {
  if (!/^\d+$/.test(value))
    throw new UsageError(`${what} must be a non-negative integer, got '${value}'`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${what} is too large: ${value}`);
  return n;
}

/** Parses a positive integer (≥ 1) argument, e.g. `--limit`, or throws a one-line usage error. */
export function parsePositiveIntArg(value: string, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError(`${what} must be a positive integer (1 or more), got '${value}'`);
  return parseIntArg(value, what);
}

/** Splits a comma-separated option value. */
export function parseList(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
