import {
  isContextFoldError,
  LockTimeoutError,
  StoreUnavailableError,
  UsageError,
} from '../../protocol/errors.js';

/** SQLSTATEs and driver errors that mean the connection or server went away (or timed out). */
const CONNECTION_STATES = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend, server stop)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up / shutting down)
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
  '53300', // too_many_connections
]);

const NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND']);

/** True when `e` says the connection broke or could not be made (not a statement's own error). */
export function isConnectionError(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_STATES.has(code) || NODE_CODES.has(code))) {
    return true;
  }
  const msg = String((e as { message?: unknown }).message ?? '');
  // `timeout expired`: a lone client's connection timeout (the pool's says `connection timeout`).
  return /Connection terminated|connection timeout|^timeout expired$|Client has encountered a connection error|not queryable|Connection closed/i.test(
    msg,
  );
}

/**
 * SQLSTATEs that say the URL, the role or the server's setup is wrong (not an outage: trying
 * again does not help), with what to do about each.
 */
const SETUP_HINTS: Record<string, string> = {
  '28P01': 'check the password (PGPASSWORD, ~/.pgpass or the URL)',
  '28000': "check the user name and the server's pg_hba.conf",
  '3D000': 'create the database (createdb) or fix its name in the URL',
  '25006':
    'the server accepts no writes here (a read-only standby, or default_transaction_read_only): point writers at the primary',
  '42501':
    'grant the role what contextfold needs (CREATE on the schema for its first use, then SELECT, INSERT, UPDATE and DELETE on its tables)',
};

/** What to do about a refused connection or statement, if `e` is one (see {@link SETUP_HINTS}). */
function setupHint(e: unknown): string | null {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SETUP_HINTS[code]) return SETUP_HINTS[code];
  const msg = String((e as { message?: unknown } | null)?.message ?? '');
  // The driver's own refusal of a password login it has no password for.
  if (/^SASL: /.test(msg)) return SETUP_HINTS['28P01']!;
  // A dropped connection may mention TLS too ('socket disconnected before secure TLS
  // connection was established'): that is an outage, not a setting to fix.
  if (isConnectionError(e)) return null;
  if (/\bSSL\b|\bTLS\b|certificate/i.test(msg) || (typeof code === 'string' && /CERT/.test(code))) {
    return "check the URL's sslmode and the server's certificate";
  }
  return null;
}

/**
 * The error the engine reports for a database failure: connection problems and timeouts become
 * {@link StoreUnavailableError} (a lock wait past its limit a {@link LockTimeoutError}), naming
 * the store; a refused login, a missing database or a missing privilege a {@link UsageError}
 * saying what to fix; contextfold's own errors pass unchanged; anything else is rethrown as is (a bug or
 * a schema problem, which must not look like an outage).
 */
export function storeError(
  e: unknown,
  where: string,
  doing: string,
  committed?: 'no' | 'unknown',
): unknown {
  if (isContextFoldError(e)) return e;
  const code = (e as { code?: unknown } | null)?.code;
  const why = String((e as { message?: unknown } | null)?.message ?? e);
  if (code === '55P03') {
    return new LockTimeoutError(
      `${doing}: the store stayed locked by another writer past the lock timeout: ${where}`,
      { path: where },
    );
  }
  if (code === '57014') {
    return new StoreUnavailableError(
      `${doing}: a statement ran past the statement timeout (${why}): ${where}`,
      { path: where, ...(committed ? { committed } : {}) },
      { cause: e },
    );
  }
  const hint = setupHint(e);
  if (hint !== null) {
    return new UsageError(
      `${doing}: the PostgreSQL server refused it (${why}): ${hint}: ${where}`,
      { path: where },
      { cause: e },
    );
  }
  if (isConnectionError(e)) {
    const tail =
      committed === 'unknown'
        ? ' (the connection broke during the commit: run it again, a fold is idempotent)'
        : committed === 'no'
          ? ' (nothing was committed)'
          : '';
    return new StoreUnavailableError(
      `${doing}: the PostgreSQL store is unavailable (${why})${tail}: ${where}`,
      { path: where, ...(committed ? { committed } : {}) },
      { cause: e },
    );
  }
  return e;
}
