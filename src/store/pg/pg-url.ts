import { UsageError } from '../../protocol/errors.js';

/** Where a PostgreSQL store lives: the connection, and the namespace inside the database. */
export interface PgLocation {
  /** The connection string handed to `pg` (without the `store_id` parameter). */
  connectionString: string;
  /** The store's namespace: one database holds many stores (projects) that never cross. */
  storeId: string;
  /** The URL without a password, for messages and paths in errors. */
  display: string;
}

const STORE_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** True when a `--store` / `CONTEXTFOLD_STORE` value names a PostgreSQL store. */
export function isPgUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/**
 * Parses `postgres://user[:password]@host[:port]/database?store_id=NAME` (other query
 * parameters such as `sslmode` are passed to the driver). `store_id` defaults to `default`.
 *
 * @example
 * parsePgUrl('postgres://cf@127.0.0.1:5432/contextfold?store_id=web-app').storeId; // 'web-app'
 */
export function parsePgUrl(value: string): PgLocation {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `not a PostgreSQL URL: ${redact(value)} (expected postgres://user@host:port/database?store_id=NAME)`,
    );
  }
  if (!isPgUrl(value)) {
    throw new UsageError(`not a PostgreSQL URL (it must start with postgres://): ${redact(value)}`);
  }
  const storeId = url.searchParams.get('store_id') ?? 'default';
  if (!STORE_ID_RE.test(storeId)) {
    throw new UsageError(
      `store_id ${JSON.stringify(storeId)} is not a valid name: letters, digits, '.', '_' and '-', at most 128 characters`,
    );
  }
  url.searchParams.delete('store_id');
  const connectionString = url.toString();
  const shown = new URL(connectionString);
  if (shown.password) shown.password = '***';
  shown.searchParams.set('store_id', storeId);
  return { connectionString, storeId, display: shown.toString() };
}

/** The value with any password replaced (for one-line errors). */
function redact(value: string): string {
  return value.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}
