import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeJsonError, jsonSyntaxError } from './json-syntax.js';

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe('jsonSyntaxError', () => {
  it('agrees with JSON.parse on valid and mutated documents', () => {
    fc.assert(
      fc.property(
        fc.json(),
        fc.nat(),
        fc.constantFrom('', '}', ']', ',', '"', ':', 'x', '\n', '\\'),
        (doc, at, ins) => {
          const pos = doc.length === 0 ? 0 : at % (doc.length + 1);
          const text = doc.slice(0, pos) + ins + doc.slice(pos);
          expect(jsonSyntaxError(text) === null).toBe(parses(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('locates the error by line and column in one short line of text', () => {
    expect(jsonSyntaxError('{\n  "a": 1,\n  "b": }')).toEqual({
      offset: 19,
      line: 3,
      column: 8,
      message: `unexpected "}", expected a value`,
    });
    expect(describeJsonError(`{"content": "${'x'.repeat(5000)}`)).toBe(
      'unexpected end of input, expected a closing quote at column 5014',
    );
  });
});
