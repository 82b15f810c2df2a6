import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';

/** Why an upstream exchange failed before a complete response arrived. */
export type UpstreamFailure = 'unreachable' | 'timeout' | 'dropped';

/** An upstream exchange that failed: unreachable, timed out, or cut off mid-response. */
export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    /** The socket error behind it (`ECONNRESET`, `socket hang up`, …), when there is one. */
    readonly socketCode: string | null = null,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

function codeOf(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}

/** A request whose connection to the upstream is established; the body is sent later. */
export interface ConnectedRequest {
  /** Sends the body (bytes, or a stream to pipe) and resolves with the response head. */
  send(body: Uint8Array | Readable | null): Promise<IncomingMessage>;
  /** Abandons the exchange (the client went away). */
  abort(): void;
  /** Why the proxy broke the exchange off (a timeout, the client gone), or null. */
  failure(): UpstreamError | null;
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

function describe(e: unknown, url: URL, reached: boolean): string {
  const code = (e as NodeJS.ErrnoException).code;
  const what = reached ? 'the connection to the upstream' : 'cannot reach the upstream';
  return `${what} ${url.origin}${reached ? ' failed' : ''}: ${code ?? (e as Error).message}`;
}

/** One attempt: a request, the promise of its connection, the promise of its response. */
interface Attempt {
  req: http.ClientRequest;
  connected: Promise<void>;
  response: Promise<IncomingMessage>;
  fail(e: UpstreamError): void;
  failure(): UpstreamError | null;
}

function attempt(
  target: UpstreamTarget,
  url: URL,
  method: string,
  headers: OutgoingHttpHeaders,
): Attempt {
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
  let stage: 'connecting' | 'connected' | 'responded' = 'connecting';
  req.setTimeout(target.timeoutMs, () =>
    fail(
      new UpstreamError(
        'timeout',
        stage === 'responded'
          ? `the upstream sent nothing for ${target.timeoutMs} ms in the middle of its response`
          : `the upstream did not answer within ${target.timeoutMs} ms`,
      ),
    ),
  );
  const connected = new Promise<void>((resolve, reject) => {
    req.once('socket', (socket: Socket) => {
      const up = (): void => {
        if (stage === 'connecting') stage = 'connected';
        resolve();
      };
      if (!socket.connecting) return up();
      socket.once(secure ? 'secureConnect' : 'connect', up);
    });
    req.once('error', (e) => {
      if (stage === 'connecting')
        reject(failure ?? new UpstreamError('unreachable', describe(e, url, false)));
    });
  });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', (res) => {
      stage = 'responded';
      resolve(res);
    });
    req.on('error', (e) => {
      if (stage === 'responded') return;
      reject(failure ?? new UpstreamError('dropped', describe(e, url, true), codeOf(e)));
    });
  });
  connected.catch(() => undefined);
  response.catch(() => undefined);
  return { req, connected, response, fail, failure: () => failure };
}

const STALE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * True when a pooled keep-alive connection turned out closed by the server before it answered:
 * the request never reached it, so sending it again on a new connection is safe.
 */
function stale(a: Attempt, e: unknown): boolean {
  const code = e instanceof UpstreamError ? e.socketCode : null;
  return a.req.reusedSocket && code !== null && (STALE.has(code) || code === 'socket hang up');
}

/**
 * Opens a request to the upstream and resolves once its connection is up (a pooled
 * keep-alive connection at once), before any byte of the body exists. The proxy builds the
 * pack (and writes the session) only after this, so an unreachable upstream leaves no trace.
 * A pooled connection the server had already closed is retried on a fresh one (bodies given as
 * bytes only: a stream cannot be sent twice).
 *
 * @example
 * const req = await connectUpstream(target, url, 'POST', headers);
 * const res = await req.send(Buffer.from(body));
 */
export async function connectUpstream(
  target: UpstreamTarget,
  url: URL,
  method: string,
  headers: OutgoingHttpHeaders,
): Promise<ConnectedRequest> {
  let current = attempt(target, url, method, headers);
  await current.connected;
  const sendOnce = (a: Attempt, body: Uint8Array | Readable | null): Promise<IncomingMessage> => {
    if (body === null) a.req.end();
    else if (body instanceof Uint8Array) {
      a.req.setHeader('content-length', body.byteLength);
      a.req.end(body);
    } else {
      body.on('error', (e) => a.fail(new UpstreamError('dropped', e.message)));
      body.pipe(a.req);
    }
    return a.response;
  };
  return {
    async send(body) {
      for (let tries = 0; ; tries++) {
        try {
          return await sendOnce(current, body);
        } catch (e) {
          const again = tries < 2 && !(body instanceof Readable) && stale(current, e);
          if (!again) throw e;
          current = attempt(target, url, method, headers);
          await current.connected;
        }
      }
    },
    abort() {
      current.fail(new UpstreamError('dropped', 'the client went away'));
    },
    failure() {
      return current.failure();
    },
  };
}
