import { describe, expect, it } from 'vitest';
import type { IndexEntry } from '../protocol/types.js';
import { InvertedIndex } from './inverted-index.js';

const entry = (step: number, identifiers: string[], files: string[] = [], errors: string[] = []) =>
  ({
    step_id: step,
    summary: `s${step}`,
    identifiers,
    files,
    errors,
    evicted: false,
  }) as unknown as IndexEntry;

const ENTRIES = [
  entry(1, ['port', 'postgresql'], ['Config/DB.yml']),
  entry(5, ['port', 'redis'], [], ['KeyError']),
  entry(9, ['billing', 'keyerror'], [], ['KeyError']),
  entry(12, ['port'], ['config/db.yml']),
];
const TERMS = ['port', 'postgresql', 'redis', 'billing', 'keyerror', 'config/db.yml', 'absent'];

function postings(index: InvertedIndex): Record<string, number[]> {
  return Object.fromEntries(
    TERMS.map((t) => [t, [...index.postingsOf(t)].map((o) => index.stepAt(o))]),
  );
}

describe('InvertedIndex', () => {
  it('lazy (prepared per query) and built postings are identical, through adds and resets', () => {
    const lazy = new InvertedIndex();
    lazy.reset(ENTRIES.slice(0, 2));
    lazy.prepare(['port', 'keyerror']); // first query: a linear pass for its terms only
    lazy.add(ENTRIES[2]!);
    lazy.add(ENTRIES[3]!);
    const eager = new InvertedIndex();
    eager.reset(ENTRIES);
    for (let i = 0; i < 4; i++) eager.prepare([]); // past the lazy queries: fully built
    expect(postings(lazy)).toEqual(postings(eager));
    expect(postings(eager)).toEqual({
      port: [1, 5, 12],
      postgresql: [1],
      redis: [5],
      billing: [9],
      keyerror: [5, 9], // an identifier and a folded error of one node count once
      'config/db.yml': [1, 12],
      absent: [],
    });
    expect(lazy.documentFrequency('port')).toBe(3);
  });
});
