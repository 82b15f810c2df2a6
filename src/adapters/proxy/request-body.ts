import { isRecord } from '../../import/source-error.js';
import { isUsageError } from '../../protocol/errors.js';
import { type AnthropicBody, anthropicHistory } from './anthropic-history.js';
import type { ClientHistory } from './client-history.js';
import { type OpenAiBody, openAiHistory } from './openai-history.js';
import type { ApiKind } from './provider-errors.js';

/** A request the proxy refuses before touching anything: the status and one line why. */
export class RefusedRequest extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'RefusedRequest';
  }
}

/**
 * Reads a request body up to `limit` bytes; a longer one is refused with 413 as soon as its
 * length (declared or read) passes the limit.
 */
export async function readBody(req: Request, limit: number): Promise<Uint8Array> {
  const tooLarge = (): RefusedRequest =>
    new RefusedRequest(413, `request body is over the proxy's ${limit}-byte limit`);
  const declared = Number(req.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) throw tooLarge();
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** A parsed model request: its body and the client's history in neutral form. */
export type ParsedRequest =
  | { api: 'anthropic'; body: AnthropicBody; history: ClientHistory }
  | { api: 'openai'; body: OpenAiBody; history: ClientHistory };

/**
 * Parses and checks a model request body (JSON object with a `messages` array) and converts
 * its messages to the neutral history. Refuses with 400 and one line on anything else.
 */
export function parseModelRequest(api: ApiKind, bytes: Uint8Array): ParsedRequest {
  let body: unknown;
  try {
    body = JSON.parse(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
    );
  } catch {
    throw new RefusedRequest(400, 'request body is not valid JSON');
  }
  if (!isRecord(body)) throw new RefusedRequest(400, 'request body must be a JSON object');
  if (!Array.isArray(body.messages)) {
    throw new RefusedRequest(400, 'messages: required, an array of messages');
  }
  try {
    return api === 'anthropic'
      ? { api, body: body as AnthropicBody, history: anthropicHistory(body as AnthropicBody) }
      : { api, body: body as OpenAiBody, history: openAiHistory(body as OpenAiBody) };
  } catch (e) {
    if (isUsageError(e)) throw new RefusedRequest(400, e.message);
    throw e;
  }
}
