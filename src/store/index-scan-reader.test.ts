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
