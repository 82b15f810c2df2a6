import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/** Why an upstream exchange failed before a complete response arrived. */
export type UpstreamFailure = 'unreachable' | 'timeout' | 'dropped';

/** An upstream exchange that failed: unreachable, timed out, or cut off mid-response. */
export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/** A request whose connection to the upstream is established; the body is sent later. */
export interface ConnectedRequest {
  /** Sends the body (bytes, or a stream to pipe) and resolves with the response head. */
  send(body: Uint8Array | Readable | null): Promise<IncomingMessage>;
  /** Abandons the exchange (the client went away). */
  abort(): void;
}

/** Where and how to reach the upstream. */
export interface UpstreamTarget {
  base: URL;
  /** Idle timeout of the upstream socket: connecting, waiting, and between response bytes. */
  timeoutMs: number;
  agents: { http: http.Agent; https: https.Agent };
}

/** The upstream URL of a request path: the base URL's path, then the request's path and query. */
export function upstreamUrl(base: URL, pathAndQuery: string): URL {
  const prefix = base.pathname.replace(/\/+$/, '');
  return new URL(`${base.origin}${prefix}${pathAndQuery}`);
}

function describe(e: unknown, url: URL): string {
  const code = (e as NodeJS.ErrnoException).code;
  return `cannot reach the upstream ${url.origin}: ${code ?? (e as Error).message}`;
}

/**
 * Opens a request to the upstream and resolves once its connection is up (a pooled
 * keep-alive connection at once), before any byte of the body exists. The proxy builds the
 * pack (and writes the session) only after this, so an unreachable upstream leaves no trace.
 *
 * @example
 * const req = await connectUpstream(target, url, 'POST', headers);
 * const res = await req.send(Buffer.from(body));
 */
export function connectUpstream(
  target: UpstreamTarget,
  url: URL,
  method: string,
  headers: OutgoingHttpHeaders,
): Promise<ConnectedRequest> {
  const secure = url.protocol === 'https:';
  const req = (secure ? https : http).request(url, {
    method,
    headers,
    agent: secure ? target.agents.https : target.agents.http,
  });
  let failure: UpstreamError | null = null;
  const fail = (e: UpstreamError): void => {
    failure ??= e;
    req.destroy(e);
  };
  req.setTimeout(target.timeoutMs, () =>
    fail(new UpstreamError('timeout', `the upstream did not answer within ${target.timeoutMs} ms`)),
  );
  let responded = false;
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', (res) => {
      responded = true;
      resolve(res);
    });
    req.on('error', (e) => {
      if (!responded) reject(failure ?? new UpstreamError('dropped', describe(e, url)));
    });
  });
  response.catch(() => undefined);
  return new Promise<ConnectedRequest>((resolve, reject) => {
    const ready = (): void =>
      resolve({
        send(body) {
          if (body === null) req.end();
          else if (body instanceof Uint8Array) {
            req.setHeader('content-length', body.byteLength);
            req.end(body);
          } else {
            body.on('error', (e) => fail(new UpstreamError('dropped', e.message)));
            body.pipe(req);
          }
          return response;
        },
        abort() {
          fail(new UpstreamError('dropped', 'the client went away'));
        },
      });
    req.once('error', (e) => reject(failure ?? new UpstreamError('unreachable', describe(e, url))));
    req.once('socket', (socket: Socket) => {
      if (!socket.connecting) return ready();
      socket.once(secure ? 'secureConnect' : 'connect', ready);
    });
  });
}
