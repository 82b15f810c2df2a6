import type { PgLocation } from './pg-url.js';

/** How long a connection may take to be established (then `STORE_UNAVAILABLE`). */
export const CONNECT_TIMEOUT_MS = 10_000;

/** The server-side `statement_timeout` of every connection unless a store sets its own. */
export const STATEMENT_TIMEOUT_MS = 60_000;

/**
 * The `pg` client settings every contextfold connection uses (the store's pool and a one-off
 * client alike): a server that accepts TCP but never answers ends in a connection timeout,
 * and a statement that runs too long in the server's `statement_timeout`, never a hang.
 */
export function pgClientOptions(
  where: PgLocation,
  statementTimeoutMs = STATEMENT_TIMEOUT_MS,
): {
  connectionString: string;
  statement_timeout: number;
  connectionTimeoutMillis: number;
  application_name: string;
} {
  return {
    connectionString: where.connectionString,
    statement_timeout: statementTimeoutMs,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'contextfold',
  };
}
