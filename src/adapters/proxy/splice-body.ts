// A rebuilt request body as the client's own bytes with only the changed top-level members
// replaced: the fields the proxy does not touch keep their exact bytes (numbers beyond double
// precision, `-0`, `1e400`, key order, spacing, invalid UTF-8 inside strings).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Byte range of one member's value in the root object, and where its key starts. */
interface Member {
  key: string;
  valueStart: number;
  valueEnd: number;
}

/** End (exclusive) of the string starting at `at` (a quote). */
function stringEnd(bytes: Uint8Array, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    if (bytes[i] === BACKSLASH) i++;
    else if (bytes[i] === QUOTE) return i + 1;
  }
  return -1;
}

const isSpace = (b: number): boolean => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/**
 * The root object's members, in order, or null when the bytes are not a JSON object this
 * scanner can follow (the caller then serialises the body whole). UTF-8 never uses the bytes of
 * `"`, `\`, brackets or commas inside a multi-byte character, so a byte scan is exact.
 */
function rootMembers(bytes: Uint8Array): { members: Member[]; close: number } | null {
  let i = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3;
  while (i < bytes.length && isSpace(bytes[i]!)) i++;
  if (bytes[i] !== OPEN_OBJECT) return null;
  const members: Member[] = [];
  i++;
  for (;;) {
    while (i < bytes.length && isSpace(bytes[i]!)) i++;
    if (bytes[i] === CLOSE_OBJECT) return { members, close: i };
    if (bytes[i] !== QUOTE) return null;
    const keyEnd = stringEnd(bytes, i);
    if (keyEnd < 0) return null;
    const key = JSON.parse(Buffer.from(bytes.subarray(i, keyEnd)).toString('utf8')) as string;
    i = keyEnd;
    while (i < bytes.length && isSpace(bytes[i]!)) i++;
    if (bytes[i] !== COLON) return null;
    i++;
    while (i < bytes.length && isSpace(bytes[i]!)) i++;
    const valueStart = i;
    let depth = 0;
    for (; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (b === QUOTE) {
        const end = stringEnd(bytes, i);
        if (end < 0) return null;
        i = end - 1;
      } else if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
      else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (depth === 0) break;
        depth--;
      } else if (b === COMMA && depth === 0) break;
    }
    let valueEnd = i;
    while (valueEnd > valueStart && isSpace(bytes[valueEnd - 1]!)) valueEnd--;
    members.push({ key, valueStart, valueEnd });
    if (bytes[i] === COMMA) i++;
  }
}

/**
 * The client's body bytes with the top-level members `changed` replaces (serialised with
 * `JSON.stringify`) and the new ones appended; every other byte as the client sent it. Null
 * when the bytes are not a plain JSON object, or a changed key appears twice: serialise whole.
 *
 * @example
 * spliceBody(Buffer.from('{"seed":12345678901234567890,"messages":[]}'), { messages: [1] });
 * // '{"seed":12345678901234567890,"messages":[1]}'
 */
export function spliceBody(raw: Uint8Array, changed: Record<string, unknown>): Buffer | null {
  const root = rootMembers(raw);
  if (!root) return null;
  const pieces: Uint8Array[] = [];
  let at = 0;
  const done = new Set<string>();
  for (const m of root.members) {
    if (!Object.hasOwn(changed, m.key)) continue;
    if (done.has(m.key)) return null;
    done.add(m.key);
    pieces.push(raw.subarray(at, m.valueStart), Buffer.from(JSON.stringify(changed[m.key])));
    at = m.valueEnd;
  }
  const added = Object.keys(changed).filter((k) => !done.has(k));
  if (added.length === 0) {
    pieces.push(raw.subarray(at));
    return Buffer.concat(pieces);
  }
  pieces.push(raw.subarray(at, root.close));
  const tail = added.map((k) => `${JSON.stringify(k)}:${JSON.stringify(changed[k])}`).join(',');
  pieces.push(
    Buffer.from(`${root.members.length > 0 ? ',' : ''}${tail}`),
    raw.subarray(root.close),
  );
  return Buffer.concat(pieces);
}
