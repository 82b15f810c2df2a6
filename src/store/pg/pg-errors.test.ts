import { describe, expect, it } from 'vitest';
import { storeError } from './pg-errors.js';

const where = 'postgres://cf:***@db/cf?store_id=web';

/** A driver error as `pg` raises it: a message and, from the server, a SQLSTATE. */
function driverError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code ? { code } : {});
}

describe('storeError', () => {
  it.each([
    ['28P01', 'password authentication failed for user "cf"', 'check the password'],
    ['28000', 'role "nobody" does not exist', 'pg_hba.conf'],
    ['3D000', 'database "nodb" does not exist', 'createdb'],
    ['42501', 'permission denied for schema public', 'grant the role'],
    ['25006', 'cannot execute INSERT in a read-only transaction', 'point writers at the primary'],
    [undefined, 'SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string', 'password'],
    [undefined, 'The server does not support SSL connections', 'sslmode'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate', 'sslmode'],
  ])('a refusal (%s %s) is a UsageError saying what to fix', (code, message, hint) => {
    const e = storeError(driverError(message, code), where, 'opening the store', 'no');
    expect(e).toMatchObject({ code: 'USAGE', details: { path: where } });
    expect((e as Error).message).toContain(message);
    expect((e as Error).message).toContain(hint);
    expect((e as Error).message.endsWith(where)).toBe(true);
  });

  it('an outage stays STORE_UNAVAILABLE, anything else passes unchanged', () => {
    const refused = storeError(
      driverError('connect ECONNREFUSED', 'ECONNREFUSED'),
      where,
      'x',
      'no',
    );
    expect(refused).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const dropped = driverError(
      'Client network socket disconnected before secure TLS connection was established',
      'ECONNRESET',
    );
    expect(storeError(dropped, where, 'x', 'no')).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const bug = driverError('syntax error at or near "x"', '42601');
    expect(storeError(bug, where, 'x')).toBe(bug);
  });
});
