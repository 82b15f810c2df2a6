import { sha256Hex } from '../protocol/canonical-json.js';

/** What matchers may look up: the case's verified inputs and the values saved by earlier steps. */
export interface MatchContext {
  inputs: ReadonlyMap<string, Buffer>;
  saved: ReadonlyMap<string, unknown>;
}

const OPERATORS = new Set([
  '$unordered',
  '$ne',
  '$saved',
  '$lte',
  '$gte',
  '$in',
  '$input_sha256',
  '$input_bytes',
  '$prefix_of_input',
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An expected value is an operator when it is an object with one key that is a known `$` name. */
function operatorOf(expected: unknown): string | null {
  if (!isObject(expected)) return null;
  const keys = Object.keys(expected);
  if (keys.length === 1 && keys[0]!.startsWith('$')) {
    if (!OPERATORS.has(keys[0]!)) throw new Error(`unknown matcher ${keys[0]}`);
    return keys[0]!;
  }
  return null;
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  if (s === undefined) return String(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function input(ctx: MatchContext, name: unknown): Buffer {
  const b = typeof name === 'string' ? ctx.inputs.get(name) : undefined;
  if (!b) throw new Error(`matcher names unknown input ${show(name)}`);
  return b;
}

function decodeBase64(v: unknown): Buffer | null {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) return null;
  return Buffer.from(v, 'base64');
}

/** Where a reason points: the path, or `(result)` for the whole result. */
function label(path: string): string {
  return path || '(result)';
}

/**
 * Compares an actual value with an expected one (conformance/PROTOCOL.md §4). Scalars compare
 * strictly; arrays by length and element; objects on the expected keys only (other keys are
 * the runtime's business); `$` operators as documented. Returns `null` on a match, else a
 * one-line reason naming the path. Throws on a malformed expectation (a corpus bug).
 *
 * @example
 * match({ step_id: 137 }, { step_id: 137, score: 6 }, ctx); // null
 * match([1, 2], [2, 1], ctx); // '[0]: expected 1, got 2'
 */
export function match(
  expected: unknown,
  actual: unknown,
  ctx: MatchContext,
  path = '',
): string | null {
  const here = label(path);
  const op = operatorOf(expected);
  if (op) {
    const arg = (expected as Record<string, unknown>)[op];
    switch (op) {
      case '$ne':
        return match(arg, actual, ctx, path) === null
          ? `${here}: expected anything but ${show(arg)}`
          : null;
      case '$saved': {
        if (typeof arg !== 'string' || !ctx.saved.has(arg))
          throw new Error(`nothing saved as ${show(arg)}`);
        return match(ctx.saved.get(arg), actual, ctx, path);
      }
      case '$lte':
      case '$gte': {
        if (typeof actual !== 'number') return `${here}: expected a number, got ${show(actual)}`;
        const okay = op === '$lte' ? actual <= (arg as number) : actual >= (arg as number);
        return okay
          ? null
          : `${here}: expected ${op === '$lte' ? '<=' : '>='} ${arg}, got ${actual}`;
      }
      case '$in': {
        if (!Array.isArray(arg)) throw new Error('$in needs an array');
        return arg.some((a) => match(a, actual, ctx, path) === null)
          ? null
          : `${here}: expected one of ${show(arg)}, got ${show(actual)}`;
      }
      case '$input_sha256': {
        const want = sha256Hex(input(ctx, arg));
        return actual === want
          ? null
          : `${here}: expected the SHA-256 of ${arg} (${want.slice(0, 12)}…), got ${show(actual)}`;
      }
      case '$input_bytes': {
        const want = input(ctx, arg).length;
        return actual === want
          ? null
          : `${here}: expected ${want} bytes (${arg}), got ${show(actual)}`;
      }
      case '$prefix_of_input':
        return matchPrefixOfInput(arg, actual, ctx, here);
      default:
        return matchUnordered(arg, actual, ctx, here);
    }
  }
  if (Array.isArray(expected)) return matchArray(expected, actual, ctx, path);
  if (isObject(expected)) return matchObject(expected, actual, ctx, path);
  return expected === actual ? null : `${here}: expected ${show(expected)}, got ${show(actual)}`;
}

/** `$prefix_of_input`: base64 content that is a non-empty, unaltered prefix of a case input. */
function matchPrefixOfInput(
  arg: unknown,
  actual: unknown,
  ctx: MatchContext,
  here: string,
): string | null {
  const whole = input(ctx, arg);
  const got = decodeBase64(actual);
  if (!got) return `${here}: expected base64 content, got ${show(actual)}`;
  if (got.length === 0) return `${here}: expected a non-empty prefix of ${arg}, got nothing`;
  return got.length <= whole.length && whole.subarray(0, got.length).equals(got)
    ? null
    : `${here}: content is not a prefix of ${arg} (bytes were altered)`;
}

/** `$unordered`: each expected element matches a distinct actual one, in any order. */
function matchUnordered(
  arg: unknown,
  actual: unknown,
  ctx: MatchContext,
  here: string,
): string | null {
  if (!Array.isArray(arg)) throw new Error('$unordered needs an array');
  if (!Array.isArray(actual)) return `${here}: expected an array, got ${show(actual)}`;
  if (actual.length !== arg.length) {
    return `${here}: expected ${arg.length} element(s) in any order, got ${actual.length}: ${show(actual)}`;
  }
  const used = new Set<number>();
  for (const want of arg) {
    const i = actual.findIndex((a, k) => !used.has(k) && match(want, a, ctx) === null);
    if (i < 0) return `${here}: no element matches ${show(want)} in ${show(actual)}`;
    used.add(i);
  }
  return null;
}

/** An expected array: same length, each element matched in order (the first mismatch is told). */
function matchArray(
  expected: unknown[],
  actual: unknown,
  ctx: MatchContext,
  path: string,
): string | null {
  const here = label(path);
  if (!Array.isArray(actual)) return `${here}: expected an array, got ${show(actual)}`;
  if (actual.length !== expected.length) {
    return `${here}: expected ${expected.length} element(s), got ${actual.length}: ${show(actual)}`;
  }
  for (let i = 0; i < expected.length; i++) {
    const r = match(expected[i], actual[i], ctx, `${path}[${i}]`);
    if (r) return r;
  }
  return null;
}

/** An expected object: each expected key present and matched; other keys are not looked at. */
function matchObject(
  expected: Record<string, unknown>,
  actual: unknown,
  ctx: MatchContext,
  path: string,
): string | null {
  if (!isObject(actual)) return `${label(path)}: expected an object, got ${show(actual)}`;
  for (const key of Object.keys(expected)) {
    const p = path ? `${path}.${key}` : key;
    if (!(key in actual)) return `${p}: missing (expected ${show(expected[key])})`;
    const r = match(expected[key], actual[key], ctx, p);
    if (r) return r;
  }
  return null;
}

/**
 * Reads a dotted path (`results.2.projection_sha256`) out of a result, for `save`.
 *
 * @example
 * pluck({ a: [{ b: 1 }] }, 'a.0.b'); // 1
 */
export function pluck(value: unknown, path: string): unknown {
  let cur: unknown = value;
  for (const seg of path.split('.')) {
    if (Array.isArray(cur) && /^\d+$/.test(seg)) cur = cur[Number(seg)];
    else if (isObject(cur)) cur = cur[seg];
    else return undefined;
  }
  return cur;
}
