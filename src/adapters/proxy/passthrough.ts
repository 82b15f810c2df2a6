import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { upstreamHeaders } from './headers.js';
import { apiOf } from './provider-errors.js';
import { errorResponse, type ProxyContext } from './proxy-context.js';
import { relay } from './relay.js';
import { connectUpstream, UpstreamError, upstreamUrl } from './upstream.js';

/**
 * Forwards a request the proxy does not fold (any other path or method, or a model request
 * with no messages) untouched: same method, headers (minus hop-by-hop), body and query, and the
 * upstream's answer streamed back as it comes. No session is involved. One log line.
 */
export async function passthrough(
  ctx: ProxyContext,
  req: Request,
  pathAndQuery: string,
  body?: Uint8Array,
  breakClient?: () => void,
): Promise<Response> {
  const t0 = performance.now();
  const path = pathAndQuery.split('?')[0]!;
  const api = apiOf(path, req.headers);
  // A client that gives up before the answer is over cancels the upstream call (it would run
  // on, billed, until the upstream answered or --timeout).
  let cancel = (): void => undefined;
  const client = req.signal;
  client.addEventListener('abort', () => cancel(), { once: true });
  const log = (
    status: number,
    outcome: 'ok' | 'dropped' | 'client_closed' | 'unreachable' | 'timeout',
  ): void =>
    ctx.log({
      kind: 'passthrough',
      method: req.method,
      path,
      status,
      outcome: client.aborted ? 'client_closed' : outcome,
      ms: Math.round((performance.now() - t0) * 100) / 100,
    });
  try {
    const headers = upstreamHeaders(req.headers);
    // A body forwarded as a stream keeps its declared length (its bytes are not touched).
    const length = req.headers.get('content-length');
    if (body === undefined && length !== null) headers['content-length'] = length;
    const connected = await connectUpstream(
      ctx.target,
      upstreamUrl(ctx.target.base, pathAndQuery),
      req.method,
      headers,
    );
    cancel = () => connected.abort();
    if (client.aborted) cancel();
    const stream =
      body ??
      (req.body ? Readable.fromWeb(req.body as unknown as NodeReadableStream<Uint8Array>) : null);
    const res = await connected.send(stream);
    return await relay(res, {
      api,
      headers: {},
      raw: true,
      ...(breakClient ? { breakClient } : {}),
      onEnd: (outcome, _detail, status) => log(status, outcome),
      failure: () => connected.failure(),
    });
  } catch (e) {
    if (!(e instanceof UpstreamError)) throw e;
    const status = e.failure === 'timeout' ? 504 : 502;
    log(status, e.failure);
    return errorResponse(api, status, e.message);
  }
}
