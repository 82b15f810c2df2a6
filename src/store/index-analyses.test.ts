import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';
import { packAnalysis } from './index-analyses.js';
import { IndexDb, type StoredAnalysis } from './index-db.js';

const A: StoredAnalysis = {
  akey: 'k1',
  terms: ['alpha', 'beta', 'é'],
  tfs: [2, 1, 3],
  length: 6,
  parts: 1,
  partLength: 6,
  features: '{"f":[1,2,3]}',
};

/** The analyses rows of an index as stored (bodies as they are). */
function rows(db: IndexDb): unknown[] {
  return db.db
    .prepare('SELECT id, akey, length, parts, part_length, features, body FROM analyses')
    .all();
}

describe('analysis rows', () => {
  it('store an analysis deflated ahead (as a worker sends it) as the same bytes', () => {
    const { dir } = tempDir();
    const plain = new IndexDb(join(dir, 'a.sqlite'), { create: true });
    const ahead = new IndexDb(join(dir, 'b.sqlite'), { create: true });
    plain.putAnalyses([A]);
    // A structured clone turns the Buffers into plain Uint8Arrays.
    const p = packAnalysis(A);
    // Each in a buffer of its own: a structured clone copies a view's whole buffer.
    expect(p.body.buffer.byteLength).toBe(p.body.byteLength);
    expect(p.features.buffer.byteLength).toBe(p.features.byteLength);
    ahead.putAnalyses([
      { ...A, packed: { body: new Uint8Array(p.body), features: new Uint8Array(p.features) } },
    ]);
    expect(rows(ahead)).toEqual(rows(plain));
    expect(ahead.analyses(['k1']).get('k1')).toEqual(A);
    plain.close();
    ahead.close();
  });

  it('an uncompressed index ignores the deflated bytes and keeps text', () => {
    const { dir } = tempDir();
    const db = new IndexDb(join(dir, 'c.sqlite'), { create: true, compress: false });
    db.putAnalyses([{ ...A, packed: packAnalysis(A) }]);
    expect(db.db.prepare('SELECT features, body FROM analyses').get()).toEqual({
      features: A.features,
      body: JSON.stringify([A.terms, A.tfs]),
    });
    expect(db.analyses(['k1']).get('k1')).toEqual(A);
    db.close();
  });
});
