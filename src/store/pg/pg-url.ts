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

/** Store ids: names separated by `/` (a proxy's sessions: `web/sessions/chat-42`). */
const STORE_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._~-]*(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*$/;
const STORE_ID_MAX = 512;
/** Query parameters that carry a password (the driver reads `password` and `sslpassword`). */
const PASSWORD_PARAM = /password/i;

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
  if (!STORE_ID_RE.test(storeId) || storeId.length > STORE_ID_MAX) {
    throw new UsageError(
      `store_id ${JSON.stringify(storeId)} is not a valid name: letters, digits, '.', '_', '~' and '-', names joined by '/', at most ${STORE_ID_MAX} characters`,
    );
  }
  url.searchParams.delete('store_id');
  const connectionString = url.toString();
  const shown = new URL(connectionString);
  if (shown.password) shown.password = '***';
  // The driver also takes a password as a parameter (`password`, `sslpassword`).
  for (const k of [...shown.searchParams.keys()]) {
    if (PASSWORD_PARAM.test(k)) shown.searchParams.set(k, '***');
  }
  shown.searchParams.set('store_id', storeId);
  return { connectionString, storeId, display: shown.toString() };
}

/**
 * The value with any password replaced (for one-line errors). A password may hold `@` itself:
 * everything up to the last `@` goes.
 */
function redact(value: string): string {
  return value
    .replace(/(\/\/[^:/@]*:).*@/, '$1***@')
    .replace(/([?&][^=&#]*password[^=&#]*=)[^&#]*/gi, '$1***');
}

/**
 * A store location as messages and reports show it: a PostgreSQL URL without its password,
 * a directory as it is.
 *
 * @example
 * shownStore('postgres://cf:secret@db/cf?store_id=web'); // 'postgres://cf:***@db/cf?store_id=web'
 */
export function shownStore(value: string): string {
  if (!isPgUrl(value)) return value;
  try {
    return parsePgUrl(value).display;
  } catch {
    return redact(value);
  }
}

/**
 * The URL of a store nested under another: its `store_id` extended by `segments`.
 *
 * @example
 * childPgUrl('postgres://h/db?store_id=web', ['sessions', 'a']); // …?store_id=web%2Fsessions%2Fa
 */
export function childPgUrl(value: string, segments: readonly string[]): string {
  const where = parsePgUrl(value);
  const url = new URL(where.connectionString);
  url.searchParams.set('store_id', [where.storeId, ...segments].join('/'));
  return url.toString();
}
