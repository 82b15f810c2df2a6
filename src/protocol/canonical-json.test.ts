import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
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

/** The serialiser element by element, as it was before term lists and long strings were fast-pathed. */
function plainSerialize(value: unknown, indent: number, depth: number): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') {
    if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed())
      throw new TypeError('lone');
    return JSON.stringify(value);
  }
  const pad = indent > 0 ? `\n${' '.repeat(indent * (depth + 1))}` : '';
  const end = indent > 0 ? `\n${' '.repeat(indent * depth)}` : '';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[${value.map((v) => pad + plainSerialize(v, indent, depth + 1)).join(',')}${end}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort(compareCodePoints);
  if (keys.length === 0) return '{}';
  const colon = indent > 0 ? ': ' : ':';
  return `{${keys.map((k) => pad + JSON.stringify(k) + colon + plainSerialize(obj[k], indent, depth + 1)).join(',')}${end}}`;
}

describe('canonicalJson and prettyJson fast paths', () => {
  // Strings from every range that escapes or sorts differently, short and long (a long one goes
  // through the memo of escaped forms), in objects, nested objects and lists of strings.
  const unit = fc.constantFrom(
    'a',
    'Z',
    '"',
    '\\',
    '\n',
    '\r',
    '\x00',
    '\x1f',
    '\x7f',
    'é',
    '\u2028',
    '\uFF01',
    '\u{1F600}',
    ' ',
  );
  const text = fc.oneof(
    fc.array(unit, { maxLength: 12 }).map((a) => a.join('')),
    fc
      .tuple(fc.array(unit, { maxLength: 6 }), fc.integer({ min: 40, max: 400 }))
      .map(([a, n]) => a.join('').repeat(n)),
  );
  const value = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(text, { maxLength: 6 }),
      fc.array(tie('node'), { maxLength: 4 }),
      fc.dictionary(text, fc.oneof(tie('node'), fc.constant(undefined)), { maxKeys: 5 }),
    ),
  })).node;

  it('write the same bytes as the element-by-element serialiser', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 4 }), (values) => {
        // Serialising each value twice and in turn exercises hits and misses of the memo.
        for (const v of [...values, ...values]) {
          expect(canonicalJson(v)).toBe(plainSerialize(v, 0, 0));
          expect(prettyJson(v)).toBe(plainSerialize(v, 2, 0));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('remember long strings by content, never by length or identity', () => {
    const base = 'x"\\n'.repeat(200);
    // Three strings of one length that differ only at the end, and a copy of each.
    const long = ['a', 'b', 'c'].map((c) => `${base}${c}`);
    const copies = long.map((t) => `${t.slice(0, 300)}${t.slice(300)}`);
    for (const order of [
      [0, 1, 2, 0, 1, 2],
      [0, 0, 1, 1, 2, 2],
      [2, 1, 0, 1, 2, 0],
    ]) {
      for (const i of order) {
        expect(canonicalJson(long[i]!)).toBe(JSON.stringify(long[i]));
        expect(canonicalJson(copies[i]!)).toBe(JSON.stringify(long[i]));
        expect(prettyJson({ k: long[i], l: [copies[(i + 1) % 3]] })).toBe(
          plainSerialize({ k: long[i], l: [copies[(i + 1) % 3]] }, 2, 0),
        );
      }
    }
  });

  it('refuse a lone surrogate inside a list of strings, naming it', () => {
    expect(() => canonicalJson(['ok', 'x\uD800y'])).toThrow(
      /lone surrogate \(U\+D800\) at index 1/,
    );
    expect(() => prettyJson({ a: ['\uDC00'] })).toThrow(/lone surrogate \(U\+DC00\) at index 0/);
  });
});
