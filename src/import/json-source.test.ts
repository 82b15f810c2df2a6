import { describe, expect, it } from 'vitest';
import { messageLines, parseJsonDocument } from './json-source.js';

describe('messageLines', () => {
  it('finds where each element of a root array starts', () => {
    expect(messageLines('[\n{"a":"[x,y]"},\n  {"b":[1,\n2]},\n"s"\n]', 'messages')).toEqual([
      2, 3, 5,
    ]);
  });

  it('finds the elements of the "messages" array of a root object, not other arrays', () => {
    const doc =
      '{\n"tools": [\n{"x":1}\n],\n"messages": [\n{"role":"user"},\n\n{"role":"assistant"}\n]\n}';
    expect(messageLines(doc, 'messages')).toEqual([6, 8]);
  });

  it('is not fooled by brackets, commas and escaped quotes inside strings', () => {
    expect(messageLines('[{"t":"a\\"],[{"},\n{"t":"b"}]', 'messages')).toEqual([1, 2]);
  });
});

describe('parseJsonDocument', () => {
  it('names the line of a syntax error', () => {
    expect(() => parseJsonDocument('{\n"a": 1,\n"b": }', 'x.json')).toThrow(
      'x.json:3: not valid JSON (unexpected "}", expected a value at column 6)',
    );
  });
});
