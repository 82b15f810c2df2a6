import type { Message } from './messages.js';

/** Replaces secrets in a text (the engine's `redactText`). */
export type RedactText = (text: string) => Promise<string>;

async function redactValue(value: unknown, redact: RedactText): Promise<unknown> {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) out.push(await redactValue(v, redact));
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = await redactValue(v, redact);
    return out;
  }
  return value;
}

/**
 * A message with secrets replaced in everything a session records of it: the content, every
 * string inside tool call inputs, and the tool result's `source`. Ids, names and numbers are
 * kept. The session records (and later folds and renders) only this form, so nothing written
 * under the store holds a secret and replay rebuilds the same packs.
 *
 * @example
 * await redactMessage({ role: 'user', content: `key ${token}` }, (t) => engine.redactText(t));
 * // { role: 'user', content: 'key [REDACTED:github-token]' }
 */
export async function redactMessage<M extends Message>(m: M, redact: RedactText): Promise<M> {
  const out = { ...m, content: await redact(m.content) };
  if (out.role === 'assistant' && out.toolCalls) {
    const calls = [];
    for (const c of out.toolCalls) calls.push({ ...c, input: await redactValue(c.input, redact) });
    out.toolCalls = calls;
  }
  if (out.role === 'tool' && out.source !== undefined) out.source = await redact(out.source);
  return out;
}
