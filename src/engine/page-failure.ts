import { type ContextFoldError, ipcfErrorName } from '../protocol/errors.js';
import type { PageInFailure } from './types.js';

/**
 * The report of a page that was selected but refused (failed verification, missing, …): it
 * is never paged in and never silently replaced.
 *
 * @example
 * failures.push(pageFailure(137, err)); // { step_id: 137, code: 'INTEGRITY_CHECK', error: 'IntegrityCheckError', … }
 */
export function pageFailure(stepId: number, e: ContextFoldError): PageInFailure {
  return { step_id: stepId, code: e.code, error: ipcfErrorName(e.code), message: e.message };
}
