// The five errors IPCF-1.1 names (NodeNotFoundError, IntegrityCheckError, PathContainmentError,
// OrphanedNodeError, BrokenReferenceError) and their guards. contextfold's own errors and the
// base class are in errors.ts.
import {
  ContextFoldError,
  codedError,
  codeGuard,
  type ErrorCode,
  type ErrorDetails,
  ipcfErrorName,
} from './errors.js';

/**
 * The requested step is not in the recall index and no cold node file exists for it (CONF-10).
 *
 * @example
 * try { await cf.hydrate(999); } catch (e) {
 *   if (isNodeNotFoundError(e)) console.error(`step ${e.details.stepId} is not archived`);
 * }
 */
export class NodeNotFoundError extends codedError('NODE_NOT_FOUND') {}

/**
 * A cold node or index failed verification: hash mismatch, unparsable or truncated JSON (CONF-09).
 *
 * @example
 * try { await cf.hydrate(91); } catch (e) {
 *   if (isIntegrityCheckError(e)) console.error(e.code, e.details.path); // the file that failed
 * }
 */
export class IntegrityCheckError extends ContextFoldError {
  constructor(message: string, details: ErrorDetails = {}, code: ErrorCode = 'INTEGRITY_CHECK') {
    super(code, message, details);
    this.name = ipcfErrorName(code);
  }
}

/**
 * A stored `file_path` points outside the canonical location (a kind of integrity failure).
 *
 * @example
 * try { await cf.hydrate(91); } catch (e) {
 *   if (isPathContainmentError(e)) console.error('index points outside the store:', e.details.path);
 * }
 */
export class PathContainmentError extends IntegrityCheckError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, details, 'PATH_CONTAINMENT');
  }
}

/**
 * A cold node file exists with no index entry (CONF-12 scenario A).
 *
 * @example
 * try { await cf.hydrate(4); } catch (e) {
 *   if (isOrphanedNodeError(e)) await cf.reindexOrphan(4); // refused unless the node verifies
 * }
 */
export class OrphanedNodeError extends codedError('ORPHANED_NODE') {}

/**
 * An index entry references a cold node file that does not exist (CONF-12 scenario B).
 *
 * @example
 * try { await cf.hydrate(3); } catch (e) {
 *   if (isBrokenReferenceError(e)) console.error('cold node file is missing:', e.details.path);
 * }
 */
export class BrokenReferenceError extends codedError('BROKEN_REFERENCE') {}

/** True for {@link NodeNotFoundError}. */
export const isNodeNotFoundError = codeGuard<NodeNotFoundError>('NODE_NOT_FOUND');
/** True for {@link IntegrityCheckError}, including {@link PathContainmentError}. */
export const isIntegrityCheckError = codeGuard<IntegrityCheckError>(
  'INTEGRITY_CHECK',
  'PATH_CONTAINMENT',
);
/** True for {@link PathContainmentError}. */
export const isPathContainmentError = codeGuard<PathContainmentError>('PATH_CONTAINMENT');
/** True for {@link OrphanedNodeError}. */
export const isOrphanedNodeError = codeGuard<OrphanedNodeError>('ORPHANED_NODE');
/** True for {@link BrokenReferenceError}. */
export const isBrokenReferenceError = codeGuard<BrokenReferenceError>('BROKEN_REFERENCE');
