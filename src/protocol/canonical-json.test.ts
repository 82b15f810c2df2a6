import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeShared, sharedPath } from '../test-utils/shared.js';
import {
  canonicalJson,
  canonicalSha256,
  compareCodePoints,
  prettyJson,
  sha256Hex,
  sortedUnique,
} from './canonical-json.js';

const STORE = `${sharedPath('vectors', 'reference-store', '.contextfold')}/`;
const haveStore = fs.existsSync(STORE);

describe('compareCodePoints / sortedUnique', () => {
  it('orders astral characters after U+FFxx (UTF-16 order would not)', () => {
    expect(['\u{1F600}', '\uFF01', 'a'].sort(compareCodePoints)).toEqual([
      'a',
      '\uFF01',
      '\u{1F600}',
    ]);
    expect(['\u{1F600}', '\uFF01'].sort()).toEqual(['\u{1F600}', '\uFF01']); // the trap
    expect(compareCodePoints('ab', 'abc')).toBeLessThan(0);
    expect(compareCodePoints('abc', 'abc')).toBe(0);
    expect(compareCodePoints('\u{10000}', '\u{10001}')).toBeLessThan(0);
  });

  it('sortedUnique dedupes and sorts', () => {
    expect(sortedUnique(['b', 'a', 'b', '\u{1F600}', '\uFFFD'])).toEqual([
      'a',
      'b',
      '\uFFFD',
      '\u{1F600}',
    ]);
  });
});

describe('canonicalJson', () => {
  it('matches Python json.dumps(sort_keys, compact, ensure_ascii=False) byte for byte', () => {
    const value = {
      '\u{1F600}': 1,
      '\uFF01': 2,
      b: [true, false, null, -3, 0],
      a: {
        z: '\x00\x01\x1f\x7f\u2028\u2029"\\/\b\f\n\r\t\x0b é🚀',
        é: [],
        A: {},
      },
    };
    const expected =
      '{"a":{"A":{},"z":"\\u0000\\u0001\\u001f\x7f\u2028\u2029\\"\\\\/\\b\\f\\n\\r\\t\\u000b é🚀","é":[]},' +
      '"b":[true,false,null,-3,0],"\uFF01":2,"\u{1F600}":1}';
    expect(canonicalJson(value)).toBe(expected);
    // The SHA-256 Python computes over the same object.
    expect(canonicalSha256(value)).toBe(
      'a50079296e5e0bfdf49d4a66b911e9d83fa5c01a5ea4b9dd6ea62cdb84ed22c3',
    );
  });

  it('escapes C0 controls with lower-case hex and writes U+007F and U+2028 raw', () => {
    expect(canonicalJson('\x1f')).toBe('"\\u001f"');
    expect(canonicalJson('\x1b')).toBe('"\\u001b"');
    expect(canonicalJson('\x7f')).toBe('"\x7f"');
    expect(canonicalJson('\u2028')).toBe('"\u2028"');
  });

  it('omits undefined keys and refuses what Python hashes never contain', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(() => canonicalJson('\uD800')).toThrow(/lone surrogate/);
    expect(() => canonicalJson({ '\uDC00': 1 })).toThrow(/lone surrogate/);
    expect(() => canonicalJson(1.5)).toThrow(/integers/);
    expect(() => canonicalJson(() => 1)).toThrow();
  });

  it('sha256Hex hashes UTF-8', () => {
    expect(sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(sha256Hex('é')).toBe(sha256Hex(Uint8Array.from([0xc3, 0xa9])));
  });
});

describeShared('the reference store file format', () => {
  const read = (rel: string) => fs.readFileSync(path.join(STORE, rel), 'utf8');
  const nodeFiles = haveStore
    ? fs.readdirSync(path.join(STORE, 'cold_nodes')).filter((f) => f.endsWith('.json'))
    : [];

  it.each([
    'cold_nodes/step_000137.json',
    'recall_index.json',
    'eviction_log.json',
    ...nodeFiles.map((f) => `cold_nodes/${f}`),
  ])('prettyJson reproduces %s exactly', (rel) => {
    const text = read(rel);
    expect(prettyJson(JSON.parse(text))).toBe(text);
  });

  it.each(nodeFiles)('artifact_sha256 of %s is the canonical hash without the key', (f) => {
    const node = JSON.parse(read(`cold_nodes/${f}`)) as Record<string, unknown>;
    const { artifact_sha256, ...rest } = node;
    expect(canonicalSha256(rest)).toBe(artifact_sha256);
  });
});
