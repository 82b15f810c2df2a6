import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { ApiKind } from './provider-errors.js';
import { connectUpstream, type UpstreamTarget, upstreamUrl } from './upstream.js';

/**
 * What the upstream said about a request's model: it serves it (`known`), it says it does not
 * (`unknown`, with its answer to pass on), or the question could not be settled (`unverified`:
 * no models endpoint, an auth failure, a network error), in which case the call goes ahead and
 * the upstream decides as before.
 */
export type ModelVerdict =
  | { kind: 'known' }
  | { kind: 'unverified'; reason: string; lasting: boolean }
  | { kind: 'unknown'; status: number; contentType: string; body: Buffer };

const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Headers of the lookup: the client's (auth included), without those of the POST body, asking
 * for an uncompressed answer (the proxy reads it, and passes a not-found answer on as it is;
 * a compressed one, asked for by the SDK's `accept-encoding`, did not parse).
 */
function lookupHeaders(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase();
    if (n === 'content-length' || n === 'content-type' || n === 'content-encoding') continue;
    if (n === 'accept-encoding') continue;
    out[name] = value;
  }
  out['accept-encoding'] = 'identity';
  return out;
}

async function readSome(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of res as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_ANSWER_BYTES) {
      res.destroy();
      break;
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

/**
 * True when a 404 body is the provider saying the model does not exist, as opposed to a server
 * without the models route (an OpenAI-compatible local server answers a bare 404 there).
 */
export function isModelNotFound(api: ApiKind, body: Buffer): boolean {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return false;
  }
  const error = (json as { error?: { type?: unknown; code?: unknown } } | null)?.error;
  if (typeof error !== 'object' || error === null) return false;
  return api === 'anthropic'
    ? (json as { type?: unknown }).type === 'error' && error.type === 'not_found_error'
    : error.code === 'model_not_found';
}

/**
 * Asks the upstream whether it serves a model before any session is touched, so a call the
 * upstream would refuse for an unknown model leaves nothing in a store (both APIs have
 * `GET /v1/models/{id}`). Asked once per model and API per proxy; a model found, or a question
 * that cannot be settled by the upstream's design (no such route, another status), is
 * remembered; an unknown model, an auth failure and a transient failure are asked again.
 *
 * @example
 * const v = await checks.check('anthropic', 'claude-nope', headers); // { kind: 'unknown', status: 404, … }
 */
export class ModelChecks {
  private readonly settled = new Map<string, ModelVerdict>();

  constructor(private readonly target: UpstreamTarget) {}

  async check(api: ApiKind, model: unknown, headers: OutgoingHttpHeaders): Promise<ModelVerdict> {
    if (typeof model !== 'string' || model === '') {
      return { kind: 'unverified', reason: 'the request names no model', lasting: false };
    }
    const key = `${api}\n${model}`;
    const cached = this.settled.get(key);
    if (cached) return cached;
    const verdict = await this.ask(api, model, headers);
    if (verdict.kind === 'known' || (verdict.kind === 'unverified' && verdict.lasting))
      this.settled.set(key, verdict);
    return verdict;
  }

  private async ask(
    api: ApiKind,
    model: string,
    headers: OutgoingHttpHeaders,
  ): Promise<ModelVerdict> {
    const url = upstreamUrl(this.target.base, `/v1/models/${encodeURIComponent(model)}`);
    let res: IncomingMessage;
    try {
      const req = await connectUpstream(this.target, url, 'GET', lookupHeaders(headers));
      res = await req.send(null);
    } catch (e) {
      return { kind: 'unverified', reason: (e as Error).message, lasting: false };
    }
    const status = res.statusCode ?? 0;
    const body = await readSome(res).catch(() => Buffer.alloc(0));
    if (status >= 200 && status < 300) return { kind: 'known' };
    if (status === 404 && isModelNotFound(api, body)) {
      const contentType = String(res.headers['content-type'] ?? 'application/json');
      return { kind: 'unknown', status, contentType, body };
    }
    // No such route (a bare 404), or not allowed: asking again will not change the answer.
    const lasting = status === 404 || status === 405 || status === 501;
    return { kind: 'unverified', reason: `GET ${url.pathname} answered ${status}`, lasting };
  }
}
