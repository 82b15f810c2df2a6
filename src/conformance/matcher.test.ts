import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { match, pluck } from './matcher.js';

const payload = Buffer.from('line one\r\nline two\r\n', 'utf8');
const ctx = {
  inputs: new Map([['payload.txt', payload]]),
  saved: new Map<string, unknown>([['p', 'abc']]),
};
const m = (e: unknown, a: unknown) => match(e, a, ctx);

describe('match', () => {
  it('compares scalars strictly and objects on the expected keys only', () => {
    expect(m(137, 137)).toBeNull();
    expect(m(137, '137')).toMatch(/expected 137, got "137"/);
    expect(m(false, 0)).not.toBeNull();
    expect(m(null, null)).toBeNull();
    expect(m({ step_id: 1 }, { step_id: 1, score: 9 })).toBeNull();
    expect(m({ step_id: 1, status: 'historical' }, { step_id: 1 })).toMatch(/status: missing/);
    expect(m({}, [])).toMatch(/expected an object/);
  });

  it('compares arrays by length and order (ids, order and labels are fixed by the protocol)', () => {
    expect(m([{ step_id: 137 }, { step_id: 91 }], [{ step_id: 137 }, { step_id: 91 }])).toBeNull();
    expect(m([{ step_id: 137 }, { step_id: 91 }], [{ step_id: 91 }, { step_id: 137 }])).toMatch(
      /\[0\]\.step_id: expected 137, got 91/,
    );
    expect(m([1], [1, 2])).toMatch(/expected 1 element/);
    expect(m([], [1])).not.toBeNull();
  });

  it('supports $unordered as an exact multiset', () => {
    expect(m({ $unordered: [{ e: 'A' }, { e: 'B' }] }, [{ e: 'B' }, { e: 'A' }])).toBeNull();
    expect(m({ $unordered: [{ e: 'A' }, { e: 'A' }] }, [{ e: 'A' }, { e: 'B' }])).toMatch(
      /no element matches/,
    );
    expect(m({ $unordered: [{ e: 'A' }] }, [{ e: 'A' }, { e: 'A' }])).toMatch(/expected 1 element/);
  });

  it('supports $ne, $saved, $lte, $gte and $in', () => {
    expect(m({ $ne: 'x' }, 'y')).toBeNull();
    expect(m({ $ne: 'x' }, 'x')).toMatch(/anything but "x"/);
    expect(m({ $ne: { $saved: 'p' } }, 'abc')).not.toBeNull();
    expect(m({ $saved: 'p' }, 'abc')).toBeNull();
    expect(() => m({ $saved: 'nope' }, 'abc')).toThrow(/nothing saved/);
    expect(m({ $lte: 8 }, 8)).toBeNull();
    expect(m({ $lte: 8 }, 9)).toMatch(/<= 8, got 9/);
    expect(m({ $gte: 1 }, 0)).not.toBeNull();
    expect(m({ $lte: 8 }, '8')).toMatch(/expected a number/);
    expect(m({ $in: ['exact', 'prefix'] }, 'prefix')).toBeNull();
    expect(m({ $in: ['exact', 'prefix'] }, 'mismatch')).not.toBeNull();
  });

  it('checks content against input files: sha256, byte length and prefix', () => {
    const sha = createHash('sha256').update(payload).digest('hex');
    expect(m({ $input_sha256: 'payload.txt' }, sha)).toBeNull();
    expect(m({ $input_sha256: 'payload.txt' }, sha.replace(/^./, '0'))).not.toBeNull();
    expect(m({ $input_bytes: 'payload.txt' }, payload.length)).toBeNull();
    expect(m({ $input_bytes: 'payload.txt' }, payload.length - 1)).not.toBeNull();
    const prefix = payload.subarray(0, 10).toString('base64');
    expect(m({ $prefix_of_input: 'payload.txt' }, prefix)).toBeNull();
    expect(
      m({ $prefix_of_input: 'payload.txt' }, Buffer.from('line one\n').toString('base64')),
    ).toMatch(/not a prefix/);
    expect(m({ $prefix_of_input: 'payload.txt' }, '')).toMatch(/non-empty/);
    expect(m({ $prefix_of_input: 'payload.txt' }, 'not base64!')).toMatch(/base64/);
    expect(() => m({ $input_sha256: 'missing.txt' }, sha)).toThrow(/unknown input/);
  });

  it('refuses an unknown operator instead of comparing it as a literal', () => {
    expect(() => m({ $regex: 'a.*' }, 'abc')).toThrow(/unknown matcher/);
  });
});

describe('pluck', () => {
  it('reads dotted paths through objects and arrays', () => {
    expect(pluck({ results: [{ p: 'x' }, { p: 'y' }] }, 'results.1.p')).toBe('y');
    expect(pluck({ a: 1 }, 'a.b')).toBeUndefined();
  });
});
