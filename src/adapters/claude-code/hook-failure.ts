import type { IndexWarning } from '../../engine/types.js';
import { type ErrorCode, ipcfErrorName, isContextFoldError } from '../../protocol/errors.js';

/** Characters of an error's or a warning's message a hook line keeps at most (then `…`). */
export const MAX_HOOK_LINE_CHARS = 400;

/**
 * Errors that refuse the store or the hook's state (tampered, inconsistent, out of the store,
 * unusable): a run that meets one pages nothing in (fail-closed).
 */
const REFUSING: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INTEGRITY_CHECK',
  'PATH_CONTAINMENT',
  'ORPHANED_NODE',
  'BROKEN_REFERENCE',
  'STORE_UNAVAILABLE',
]);

/** Whether `e` refuses the store or the hook's state, so nothing may be paged in from it. */
export function refusesStore(e: unknown): boolean {
  return isContextFoldError(e) && REFUSING.has(e.code);
}

/**
 * `text` on one line (line breaks and runs of blanks become one space), at most `max` characters.
 *
 * @example
 * oneLine('a\n  b'); // 'a b'
 */
export function oneLine(text: string, max = MAX_HOOK_LINE_CHARS): string {
  const line = text.replace(/\s*[\r\n]+\s*/gu, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** The line with `path` added when it does not name it already. */
function withPath(line: string, path: unknown): string {
  return typeof path === 'string' && path !== '' && !line.includes(path)
    ? `${line} (${path})`
    : line;
}

/**
 * The one line (no stack) a hook run tells the user about an error it met once its input was
 * valid: the error's name and stable code, its message, and the path it names.
 *
 * @example
 * hookFailureLine(new IntegrityCheckError('journal line 2 is corrupt: /s/recall_index.journal', { path: '/s/recall_index.journal' }));
 * // 'contextfold: IntegrityCheckError (INTEGRITY_CHECK): journal line 2 is corrupt: /s/recall_index.journal'
 */
export function hookFailureLine(e: unknown): string {
  if (isContextFoldError(e)) {
    const line = withPath(oneLine(e.message), e.details.path);
    return `contextfold: ${ipcfErrorName(e.code)} (${e.code}): ${line}`;
  }
  const message = e instanceof Error ? e.message : String(e);
  const sys = (e as { code?: unknown; path?: unknown } | null) ?? {};
  // A system error (ENOSPC, EACCES…) is the machine's state, not a bug.
  if (typeof sys.code === 'string' && /^E[A-Z]+$/u.test(sys.code)) {
    return `contextfold: ${sys.code}: ${withPath(oneLine(message), sys.path)}`;
  }
  return `contextfold: internal error (please report): ${oneLine(message)}`;
}

/**
 * The one line of a store warning: its message's first line, bounded, and its path.
 *
 * @example
 * hookWarningLine({ code: 'INDEX_REBUILT', message: 'the derived index is missing: rebuilt index-1.sqlite', path: '/s/index-1.sqlite' });
 * // 'contextfold: warning: the derived index is missing: rebuilt index-1.sqlite (/s/index-1.sqlite)'
 */
export function hookWarningLine(w: IndexWarning): string {
  const first = w.message.split(/\r?\n/u, 1)[0] ?? '';
  return `contextfold: warning: ${withPath(oneLine(first), w.path)}`;
}
