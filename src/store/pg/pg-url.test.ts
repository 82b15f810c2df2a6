import { describe, expect, it } from 'vitest';
import { parsePgUrl, shownStore } from './pg-url.js';

describe('store URLs as messages show them', () => {
  it('hide a password in the user part and in a password parameter', () => {
    const p = parsePgUrl(
      'postgres://cf:S3cret@db:5432/cf?password=S3cret&sslpassword=S3cret&store_id=web',
    );
    expect(p.display).toBe(
      'postgres://cf:***@db:5432/cf?password=***&sslpassword=***&store_id=web',
    );
    // The driver still gets them.
    expect(p.connectionString).toContain('password=S3cret&sslpassword=S3cret');
  });

  it('hide a password of a URL that does not parse, even one holding @', () => {
    for (const bad of [
      'postgres://u:p@S3cret@h:99999/db',
      'postgres://u@h:99999/db?password=S3cret',
    ]) {
      expect(() => parsePgUrl(bad)).toThrow(/not a PostgreSQL URL/);
      try {
        parsePgUrl(bad);
      } catch (e) {
        expect((e as Error).message).not.toContain('S3cret');
      }
      expect(shownStore(bad)).not.toContain('S3cret');
    }
  });

  it('leave a directory as it is', () => {
    expect(shownStore('./a:b@c/.contextfold')).toBe('./a:b@c/.contextfold');
    expect(shownStore('postgres://cf:S3cret@db/cf')).toBe(
      'postgres://cf:***@db/cf?store_id=default',
    );
  });
});
