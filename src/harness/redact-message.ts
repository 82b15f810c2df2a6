import { setOwnEntry } from '../protocol/own-entry.js';
import type { Message } from './messages.js';

/** Replaces secrets in texts that belong together (the engine's `redactTexts`). */
export type RedactTexts = (texts: readonly string[]) => Promise<string[]>;

/**
 * A key that can name what its value is (`Authorization`, `DB_PASSWORD`, `api_key`): redacted
 * in front of its value, since the value alone (`Bearer …`, a bare password) has no shape.
 */
const NAMING_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/** One string of a message to redact, with the `key: ` its value is redacted after (or ''). */
interface Piece {
  text: string;
  prefix: string;
}

/** Every string of a JSON value, in a fixed walk order, and a way to put replacements back. */
function strings(value: unknown, out: Piece[], key?: string): void {
  if (typeof value === 'string') {
    out.push({ text: value, prefix: key !== undefined && NAMING_KEY.test(key) ? `${key}: ` : '' });
  } else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) strings(v, out, k);
  }
}

function rebuild(value: unknown, next: () => string): unknown {
  if (typeof value === 'string') return next();
  if (Array.isArray(value)) return value.map((v) => rebuild(v, next));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) setOwnEntry(out, k, rebuild(v, next));
    return out;
  }
  return value;
}

/** The redactable parts of a message: content, tool call inputs, the tool result's `source`. */
function parts(m: Message): unknown[] {
  const p: unknown[] = [m.content];
  if (m.role === 'assistant') p.push((m.toolCalls ?? []).map((c) => c.input));
  if (m.role === 'tool') p.push(m.source ?? null);
  return p;
}

/**
 * The pieces redacted: each string under an object key is redacted as `key: value`, so a rule
 * that needs the label (`Authorization: Bearer …`, `DB_PASSWORD: …`, `password: …`) sees it,
 * and the value is what follows the prefix. Should a match reach into the prefix (never seen:
 * the key would be a secret itself), the value is redacted again on its own, as before.
 */
async function redactPieces(pieces: readonly Piece[], redact: RedactTexts): Promise<string[]> {
  const done = await redact(pieces.map((p) => p.prefix + p.text));
  const again: number[] = [];
  const out = done.map((d, i) => {
    const { prefix } = pieces[i]!;
    if (d.startsWith(prefix)) return d.slice(prefix.length);
    again.push(i);
    return '';
  });
  if (again.length > 0) {
    const alone = await redact(again.map((i) => pieces[i]!.text));
    for (const [k, i] of again.entries()) out[i] = alone[k]!;
  }
  return out;
}

/**
 * Messages with secrets replaced in everything a session records of them: the content, every
 * string inside tool call inputs (redacted after its key: `{ "Authorization": "Bearer …" }`
 * loses the token), and a tool result's `source` (ids, names and numbers are kept). All
 * messages are redacted together, so a secret removed from one (a password in a command) is
 * also removed where another repeats it (the command's output). The session records, folds and
 * renders only this form, so nothing under the store holds a secret and replay rebuilds the
 * same packs.
 *
 * @example
 * await redactMessages([{ role: 'user', content: `key ${token}` }], (t) => engine.redactTexts(t));
 * // [{ role: 'user', content: 'key [REDACTED:github-token]' }]
 */
export async function redactMessages<M extends Message>(
  messages: readonly M[],
  redact: RedactTexts,
): Promise<M[]> {
  const pieces: Piece[] = [];
  for (const m of messages) strings(parts(m), pieces);
  if (pieces.length === 0) return [...messages];
  const done = await redactPieces(pieces, redact);
  let k = 0;
  const next = () => done[k++]!;
  return messages.map((m) => {
    const [content, extra] = rebuild(parts(m), next) as [string, unknown];
    const out = { ...m, content } as M;
    if (out.role === 'assistant' && out.toolCalls) {
      const inputs = extra as unknown[];
      out.toolCalls = out.toolCalls.map((c, i) => ({ ...c, input: inputs[i] }));
    }
    if (out.role === 'tool' && out.source !== undefined) out.source = extra as string;
    return out;
  });
}
