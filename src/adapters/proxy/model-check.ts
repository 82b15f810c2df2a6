import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { ApiKind } from './provider-errors.js';
import {
  type ConnectedRequest,
  connectUpstream,
  UpstreamError,
  type UpstreamTarget,
  upstreamUrl,
} from './upstream.js';

/**
 * What the upstream said about a request's model: it serves it (`known`), it says it does not
 * (`unknown`, with its answer to pass on), or the question could not be settled (`unverified`:
 * no models endpoint, an auth failure, a network error), in which case the call goes ahead and
 * the upstream decides as before.
 */
export type ModelVerdict =
  | { kind: 'known' }
  | { kind: 'unverified'; reason: string; remember: Remember }
  | { kind: 'unknown'; status: number; contentType: string; body: Buffer };

/**
 * How long an unsettled answer stands: for the proxy's life (the upstream has no such route),
 * for a while (an auth failure or a lookup that took too long, which asking on every call would
 * only repeat), or not at all (a network error: the call itself fails too).
 */
type Remember = 'always' | 'briefly' | 'no';

const MAX_ANSWER_BYTES = 64 * 1024;

/** The longest a lookup may take (connecting, waiting, reading): it is only advisory. */
export const MODEL_LOOKUP_TIMEOUT_MS = 5000;

/** How long an auth failure or a timed-out lookup is remembered before the model is asked again. */
export const MODEL_LOOKUP_RETRY_MS = 10 * 60 * 1000;

/** Options of {@link ModelChecks}, for tests: the lookup's time bound and the clock. */
export interface ModelCheckOptions {
  lookupTimeoutMs?: number;
  now?: () => number;
}

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
 * remembered; an auth failure (401/403: a subscription token may serve messages but not the
 * models route) and a lookup past its time bound are remembered for {@link
 * MODEL_LOOKUP_RETRY_MS}; an unknown model and a network error are asked again. Simultaneous
 * first calls for one model share one lookup, which takes at most {@link
 * MODEL_LOOKUP_TIMEOUT_MS} (or the upstream timeout, if shorter).
 *
 * @example
 * const v = await checks.check('anthropic', 'claude-nope', headers); // { kind: 'unknown', status: 404, … }
 */
export class ModelChecks {
  private readonly settled = new Map<string, { verdict: ModelVerdict; until: number }>();
  private readonly asking = new Map<string, Promise<ModelVerdict>>();
  private readonly lookupTimeoutMs: number;
  private readonly now: () => number;

  constructor(
    private readonly target: UpstreamTarget,
    options: ModelCheckOptions = {},
  ) {
    this.lookupTimeoutMs = Math.min(
      target.timeoutMs,
      options.lookupTimeoutMs ?? MODEL_LOOKUP_TIMEOUT_MS,
    );
    this.now = options.now ?? Date.now;
  }

  async check(api: ApiKind, model: unknown, headers: OutgoingHttpHeaders): Promise<ModelVerdict> {
    if (typeof model !== 'string' || model === '') {
      return { kind: 'unverified', reason: 'the request names no model', remember: 'no' };
    }
    const key = `${api}\n${model}`;
    const cached = this.settled.get(key);
    if (cached && cached.until > this.now()) return cached.verdict;
    const pending = this.asking.get(key);
    if (pending) return pending;
    const asked = this.ask(api, model, headers).then((verdict) => {
      const remember =
        verdict.kind === 'known'
          ? 'always'
          : verdict.kind === 'unverified'
            ? verdict.remember
            : 'no';
      if (remember === 'always') this.settled.set(key, { verdict, until: Infinity });
      else if (remember === 'briefly')
        this.settled.set(key, { verdict, until: this.now() + MODEL_LOOKUP_RETRY_MS });
      else this.settled.delete(key);
      return verdict;
    });
    this.asking.set(key, asked);
    try {
      return await asked;
    } finally {
      this.asking.delete(key);
    }
  }

  private async ask(
    api: ApiKind,
    model: string,
    headers: OutgoingHttpHeaders,
  ): Promise<ModelVerdict> {
    const url = upstreamUrl(this.target.base, `/v1/models/${encodeURIComponent(model)}`);
    const target = { ...this.target, timeoutMs: this.lookupTimeoutMs };
    let req: ConnectedRequest | null = null;
    let late = false;
    // The idle timeout bounds connecting and each wait; this bounds the whole lookup.
    const timer = setTimeout(() => {
      late = true;
      req?.abort();
    }, this.lookupTimeoutMs);
    try {
      const slow: ModelVerdict = {
        kind: 'unverified',
        reason: `GET ${url.pathname} took more than ${this.lookupTimeoutMs} ms`,
        remember: 'briefly',
      };
      let res: IncomingMessage;
      try {
        req = await connectUpstream(target, url, 'GET', lookupHeaders(headers));
        if (late) req.abort();
        res = await req.send(null);
      } catch (e) {
        if (late || (e instanceof UpstreamError && e.failure === 'timeout')) return slow;
        return { kind: 'unverified', reason: (e as Error).message, remember: 'no' };
      }
      const status = res.statusCode ?? 0;
      const body = await readSome(res).catch(() => Buffer.alloc(0));
      if (late) return slow;
      if (status >= 200 && status < 300) return { kind: 'known' };
      if (status === 404 && isModelNotFound(api, body)) {
        const contentType = String(res.headers['content-type'] ?? 'application/json');
        return { kind: 'unknown', status, contentType, body };
      }
      // No such route (a bare 404), or not allowed: asking again will not change the answer.
      // Refused credentials (a subscription token may serve messages only): not on every call.
      const remember: Remember =
        status === 404 || status === 405 || status === 501
          ? 'always'
          : status === 401 || status === 403
            ? 'briefly'
            : 'no';
      return { kind: 'unverified', reason: `GET ${url.pathname} answered ${status}`, remember };
    } finally {
      clearTimeout(timer);
    }
  }
}
