import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { FIELD_RANKED, IndexDb } from './index-db.js';

describe('IndexScanReader.dfMany', () => {
  it('answers what df answers for each term, unknown, repeated, lone-surrogate and control-character terms included', () => {
    const { dir } = tempDir();
    const db = new IndexDb(join(dir, 'a.sqlite'), { create: true });
    const put = db.db.prepare('INSERT INTO terms (field, term, id, df) VALUES (?, ?, ?, ?)');
    const stored: [string, number][] = [
      ['port', 3],
      ['ünï', 2],
      ['\ud800x', 5],
      ['a\u0001b', 4],
      ['q"\\', 6],
    ];
    stored.forEach(([term, df], i) => {
      put.run(FIELD_RANKED, term, i + 1, df);
    });
    put.run(FIELD_RANKED + 1, 'other-field', 99, 7);
    const ask = ['port', 'missing', 'port', '\ud800x', 'a\u0001b', 'ünï', 'q"\\', 'other-field'];
    const one = ask.map((t) => db.df(FIELD_RANKED, t));
    expect(one).toEqual([3, 0, 3, 5, 4, 2, 6, 0]);
    expect(db.dfMany(FIELD_RANKED, ask)).toEqual(one);
    expect(db.dfMany(FIELD_RANKED, [])).toEqual([]);
    db.close();
  });
});

describe('IndexScanReader.topTermsWithPrefixMany', () => {
  it('answers what topTermsWithPrefix answers for each prefix, lone-surrogate and control-character prefixes included', () => {
    const { dir } = tempDir();
    const db = new IndexDb(join(dir, 'a.sqlite'), { create: true });
    const put = db.db.prepare('INSERT INTO terms (field, term, id, df) VALUES (?, ?, ?, ?)');
    const stored: [string, number][] = [
      ['port', 3],
      ['portal', 5],
      ['ports', 5],
      ['portability', 1],
      ['\ud800x', 2],
      ['\ud800xyz', 4],
      ['a\u0001b', 4],
      ['a\u0001bc', 1],
      ['ünï', 2],
      ['ünïcode', 3],
    ];
    stored.forEach(([term, df], i) => {
      put.run(FIELD_RANKED, term, i + 1, df);
    });
    put.run(FIELD_RANKED + 1, 'portside', 99, 7);
    const asks = [
      { prefix: 'port', maxLength: 6 },
      { prefix: 'port', maxLength: 20 },
      { prefix: 'missing', maxLength: 9 },
      { prefix: '\ud800x', maxLength: 8 },
      { prefix: '\ud800', maxLength: 8 },
      { prefix: 'a\u0001b', maxLength: 8 },
      { prefix: 'ünï', maxLength: 8 },
    ];
    for (const limit of [1, 2, 32]) {
      const one = asks.map((a) =>
        db.topTermsWithPrefix(FIELD_RANKED, a.prefix, a.maxLength, limit),
      );
      expect(db.topTermsWithPrefixMany(FIELD_RANKED, asks, limit)).toEqual(one);
    }
    expect(db.topTermsWithPrefix(FIELD_RANKED, 'port', 20, 32)).toEqual([
      'portal',
      'ports',
      'portability',
    ]);
    expect(db.topTermsWithPrefixMany(FIELD_RANKED, [], 4)).toEqual([]);
    db.close();
  });
});
