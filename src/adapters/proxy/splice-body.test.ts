import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spliceBody } from './splice-body.js';

const text = (b: Buffer | null) => (b === null ? null : b.toString('latin1'));

describe('spliceBody', () => {
  it('replaces only the changed members: every other byte stays the client’s', () => {
    // JSON.parse then JSON.stringify turned these into 12345678901234567000, null and 0.
    const raw = Buffer.from(
      '{ "model":"m", "seed":12345678901234567890, "x":1e400, "z":-0,\n "messages":[{"role":"user"}], "t":0.1000000000000000055511151231257827 }',
    );
    const out = text(spliceBody(raw, { messages: [{ role: 'user', content: 'hi' }] }));
    expect(out).toBe(
      '{ "model":"m", "seed":12345678901234567890, "x":1e400, "z":-0,\n "messages":[{"role":"user","content":"hi"}], "t":0.1000000000000000055511151231257827 }',
    );
  });

  it('keeps invalid UTF-8 bytes inside untouched strings, and appends members it did not have', () => {
    const raw = Buffer.concat([
      Buffer.from('{"metadata":{"note":"a'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"},"messages":[]}'),
    ]);
    const out = spliceBody(raw, { messages: [1], system: [{ type: 'text', text: 'S' }] })!;
    expect(out.subarray(0, 24)).toEqual(raw.subarray(0, 24));
    expect(out.subarray(22).toString('latin1')).toBe(
      '\u00ff\u00fe"},"messages":[1],"system":[{"type":"text","text":"S"}]}',
    );
  });

  it('handles strings holding brackets, commas, quotes and backslashes', () => {
    const raw = Buffer.from('{"a":"x,}]\\"\\\\","messages":[["]"]],"b":{"c":[1,{"d":"}"}]}}');
    expect(text(spliceBody(raw, { messages: [] }))).toBe(
      '{"a":"x,}]\\"\\\\","messages":[],"b":{"c":[1,{"d":"}"}]}}',
    );
  });

  it('refuses what it cannot splice: not an object, a changed key twice', () => {
    expect(spliceBody(Buffer.from('[1]'), { messages: [] })).toBeNull();
    expect(spliceBody(Buffer.from('{"messages":[],"messages":[]}'), { messages: [1] })).toBeNull();
  });

  it('gives what JSON.parse reads as the body with the changed members (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue(), (body, messages) => {
        const raw = Buffer.from(JSON.stringify(body, null, 1));
        const out = spliceBody(raw, { messages });
        expect(out).not.toBeNull();
        expect(JSON.parse(out!.toString('utf8'))).toEqual(
          JSON.parse(JSON.stringify({ ...body, messages })),
        );
      }),
      { numRuns: 300 },
    );
  });
});
