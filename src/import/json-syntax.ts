/** Where and why a JSON text fails to parse. */
export interface JsonSyntaxProblem {
  /** UTF-16 offset of the offending character. */
  offset: number;
  line: number;
  column: number;
  message: string;
}

/** Throws the problem at `i` (what is there, what was expected) for {@link jsonSyntaxError}. */
function failAt(text: string, i: number, what?: string): never {
  const got =
    i >= text.length ? 'unexpected end of input' : `unexpected ${JSON.stringify(text[i])}`;
  throw { offset: i, message: what ? `${got}, expected ${what}` : got };
}

/** One past the closing quote of the string that opens at `from`; throws at its first flaw. */
function stringEnd(text: string, from: number): number {
  let i = from + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) failAt(text, i, 'a closing quote');
    if (c === 0x5c) {
      i++;
      const e = text[i];
      if (e === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) failAt(text, i, '4 hex digits');
        i += 5;
      } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
      else failAt(text, i, 'an escape');
    } else i++;
  }
  return failAt(text, i, 'a closing quote');
}

/** The 1-based line and column of a UTF-16 offset. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < offset; k++) {
    if (text.charCodeAt(k) === 10) {
      line++;
      lineStart = k + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Locates the first JSON syntax error in `text`, or returns null if it parses. Node's own
 * messages differ between versions, may omit the position and may echo the whole input, so
 * importers describe syntax errors with this instead (only called after `JSON.parse` failed).
 *
 * @example
 * jsonSyntaxError('{"a": }'); // { offset: 6, line: 1, column: 7, message: "unexpected '}'" }
 */
export function jsonSyntaxError(text: string): JsonSyntaxProblem | null {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (what?: string): never => failAt(text, i, what);
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail();
  };
  const string = () => {
    i = stringEnd(text, i);
  };
  const number = () => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail('a value');
    i += m![0].length;
  };
  /** An object or array from its opening bracket: `member`s between commas, then `close`. */
  const container = (close: '}' | ']', member: () => void) => {
    i++;
    ws();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      member();
      ws();
      if (text[i] === ',') i++;
      else if (text[i] === close) {
        i++;
        return;
      } else fail(`',' or '${close}'`);
    }
  };
  const property = () => {
    ws();
    if (text[i] !== '"') fail('a property name');
    string();
    ws();
    if (text[i] !== ':') fail("':'");
    i++;
    value();
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') container('}', property);
    else if (c === '[') container(']', value);
    else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) number();
    else fail('a value');
  };
  try {
    value();
    ws();
    if (i < text.length) fail('end of input');
    return null;
  } catch (e) {
    if (!(typeof e === 'object' && e !== null && 'offset' in e)) throw e;
    const { offset, message } = e as { offset: number; message: string };
    return { offset, ...lineAndColumn(text, offset), message };
  }
}

/** A short description of why `text` is not JSON: `unexpected '}' at column 7`. */
export function describeJsonError(text: string): string {
  const p = jsonSyntaxError(text);
  return p ? `${p.message} at column ${p.column}` : 'not parseable';
}
