// The error model: the codes, the base class every contextfold error extends, and contextfold's
// own errors with their guards. The five errors IPCF-1.1 names are in ipcf-errors.ts.
/**
 * Stable error codes. The five IPCF codes mirror the specification's error names; the CLI maps
 * each to the reference engine's exit code.
 */
export type ErrorCode =
  | 'NODE_NOT_FOUND'
  | 'INTEGRITY_CHECK'
  | 'PATH_CONTAINMENT'
  | 'ORPHANED_NODE'
  | 'BROKEN_REFERENCE'
  | 'USAGE'
  | 'STEP_CONFLICT'
  | 'LOCK_TIMEOUT'
  | 'STORE_NOT_FOUND'
  | 'STORE_UNAVAILABLE'
  | 'GUARD_TABLE';

/** Structured context carried by every contextfold error. */
export interface ErrorDetails {
  stepId?: number;
  path?: string;
  [key: string]: unknown;
}

const BRAND = Symbol.for('contextfold.error');

/**
 * Base class of every error contextfold throws. `code` is stable across versions; match on it
 * (or use the `isX()` guards) rather than on `instanceof`, which fails across package copies.
 *
 * @example
 * try { await engine.hydrate(7); } catch (e) { if (isContextFoldError(e)) console.log(e.code); }
 */
export class ContextFoldError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  readonly [BRAND] = true;

  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ContextFoldError';
    this.code = code;
    this.details = details;
  }

  /** JSON form: `{ error, code, message, ...details }`. */
  toJSON(): Record<string, unknown> {
    return { error: this.name, code: this.code, message: this.message, ...this.details };
  }
}

/** The constructor of an error class with a fixed code (see {@link codedError}). */
export type CodedErrorClass = new (
  message: string,
  details?: ErrorDetails,
  options?: ErrorOptions,
) => ContextFoldError;

/**
 * The base of an error class with a fixed `code`, named as the code table names it: every
 * contextfold error is `class XError extends codedError('X') {}` with its own doc comment.
 *
 * @example
 * class UsageError extends codedError('USAGE') {}
 * new UsageError('--n takes a whole number').name; // 'UsageError'
 */
export function codedError(code: ErrorCode): CodedErrorClass {
  return class extends ContextFoldError {
    constructor(message: string, details: ErrorDetails = {}, options?: ErrorOptions) {
      super(code, message, details, options);
      this.name = ipcfErrorName(code);
    }
  };
}

/**
 * Bad arguments or input: what is wrong and what to do, in one line.
 *
 * @example
 * await ContextFold.open({ dir: '' }).catch(isUsageError); // true: no store directory given
 */
export class UsageError extends codedError('USAGE') {}

/**
 * A step was folded again with a different payload, or with terms (given, or extracted from the
 * summary and payload) that change its projection, than the node already stored under it.
 *
 * @example
 * await cf.fold({ stepId: 3, summary: 'ls', content: 'a.txt' });
 * await cf.fold({ stepId: 3, summary: 'ls', content: 'b.txt' }).catch(isStepConflictError); // true
 */
export class StepConflictError extends codedError('STEP_CONFLICT') {}

/**
 * The store's inter-process write lock could not be taken in time.
 *
 * @example
 * try { await cf.fold(input); } catch (e) {
 *   if (isLockTimeoutError(e)) console.error('store busy:', e.message);
 * }
 */
export class LockTimeoutError extends codedError('LOCK_TIMEOUT') {}

/**
 * The store directory holds no store (nothing was folded or imported there).
 *
 * @example
 * await ContextFold.open({ dir: 'no-store-here', mustExist: true }).catch(isStoreNotFoundError); // true
 */
export class StoreNotFoundError extends codedError('STORE_NOT_FOUND') {}

/**
 * A database store could not be reached, or its connection broke mid-operation (the server
 * stopped, the connection was terminated, a statement timed out). Nothing was half-written: a
 * write either committed whole or not at all; `committed: 'unknown'` says the connection broke
 * while the commit itself was in flight (run the fold again: a fold is idempotent).
 *
 * @example
 * try { await shared.fold(input); } catch (e) {
 *   if (isStoreUnavailableError(e) && e.details.committed === 'unknown') await shared.fold(input);
 * }
 */
export class StoreUnavailableError extends codedError('STORE_UNAVAILABLE') {}

/**
 * A guard data file (`guard/**.json`: a pattern table, the corpus manifest or a case) is
 * missing, is not valid JSON, or does not match its published shape. `path` names the file.
 *
 * @example
 * try { loadGuardTables('./my-guard'); } catch (e) {
 *   if (isGuardTableError(e)) console.error(e.details.path, e.message);
 * }
 */
export class GuardTableError extends codedError('GUARD_TABLE') {}

/**
 * True for any contextfold error, from any copy of the package.
 *
 * @example
 * isContextFoldError(new UsageError('--n takes a whole number')); // true
 * isContextFoldError(new Error('boom')); // false
 */
export function isContextFoldError(e: unknown): e is ContextFoldError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

/**
 * A type guard for the errors with one of `codes`: it matches on `code`, so it works across
 * package copies where `instanceof` does not.
 */
export const codeGuard =
  <T extends ContextFoldError>(...codes: ErrorCode[]) =>
  (e: unknown): e is T =>
    isContextFoldError(e) && codes.includes(e.code);

/** True for {@link GuardTableError}. */
export const isGuardTableError = codeGuard<GuardTableError>('GUARD_TABLE');
/** True for {@link UsageError}. */
export const isUsageError = codeGuard<UsageError>('USAGE');
/** True for {@link StoreUnavailableError}. */
export const isStoreUnavailableError = codeGuard<StoreUnavailableError>('STORE_UNAVAILABLE');
/** True for {@link StoreNotFoundError}. */
export const isStoreNotFoundError = codeGuard<StoreNotFoundError>('STORE_NOT_FOUND');
/** True for {@link StepConflictError}. */
export const isStepConflictError = codeGuard<StepConflictError>('STEP_CONFLICT');
/** True for {@link LockTimeoutError}. */
export const isLockTimeoutError = codeGuard<LockTimeoutError>('LOCK_TIMEOUT');

/** Each code's IPCF error name, as the specification spells it, and the reference CLI's exit code. */
const CODE_TABLE: Record<ErrorCode, { name: string; exit: number }> = {
  NODE_NOT_FOUND: { name: 'NodeNotFoundError', exit: 2 },
  INTEGRITY_CHECK: { name: 'IntegrityCheckError', exit: 3 },
  PATH_CONTAINMENT: { name: 'PathContainmentError', exit: 3 },
  ORPHANED_NODE: { name: 'OrphanedNodeError', exit: 4 },
  BROKEN_REFERENCE: { name: 'BrokenReferenceError', exit: 5 },
  USAGE: { name: 'UsageError', exit: 1 },
  STEP_CONFLICT: { name: 'StepConflictError', exit: 1 },
  LOCK_TIMEOUT: { name: 'LockTimeoutError', exit: 1 },
  STORE_NOT_FOUND: { name: 'StoreNotFoundError', exit: 1 },
  STORE_UNAVAILABLE: { name: 'StoreUnavailableError', exit: 1 },
  GUARD_TABLE: { name: 'GuardTableError', exit: 1 },
};

/**
 * The IPCF error name for a code, as the specification spells it.
 *
 * @example
 * ipcfErrorName('PATH_CONTAINMENT'); // 'PathContainmentError'
 */
export function ipcfErrorName(code: ErrorCode): string {
  return CODE_TABLE[code]?.name ?? 'UsageError';
}

/**
 * The reference CLI's exit code for an error code: 1 usage, 2 not found, 3 integrity, 4 orphan, 5 broken.
 *
 * @example
 * exitCodeFor('NODE_NOT_FOUND'); // 2
 * if (isContextFoldError(e)) process.exitCode = exitCodeFor(e.code);
 */
export function exitCodeFor(code: ErrorCode): number {
  return CODE_TABLE[code]?.exit ?? 1;
}
