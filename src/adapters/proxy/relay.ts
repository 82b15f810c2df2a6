import type { IncomingMessage } from 'node:http';
import { connectionListed, isHopByHop } from './headers.js';
import { type ApiKind, errorBody, sseError } from './provider-errors.js';
import type { UpstreamError } from './upstream.js';

/** How a relayed response ended. */
export type RelayOutcome = 'ok' | 'dropped' | 'client_closed' | 'timeout';

function responseHeaders(res: IncomingMessage, extra: Record<string, string>): Headers {
  const h = new Headers();
  const raw = res.rawHeaders;
  const listed = connectionListed(res.headers.connection);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (!isHopByHop(name) && !listed.has(name.toLowerCase())) h.append(name, raw[i + 1]!);
  }
  for (const [k, v] of Object.entries(extra)) h.set(k, v);
  return h;
}

/** End of the last complete server-sent event in `buf` (0 when there is none yet). */
function lastEventEnd(buf: Buffer): number {
  const lf = buf.lastIndexOf('\n\n');
  const crlf = buf.lastIndexOf('\r\n\r\n');
  return Math.max(lf === -1 ? 0 : lf + 2, crlf === -1 ? 0 : crlf + 4);
}

/** What {@link relay} needs besides the upstream response. */
export interface RelayOptions {
  api: ApiKind;
  /** Headers the proxy adds (its report of the call). */
  headers: Record<string, string>;
  /**
   * Called once, when the exchange is over, with the status the client got; the response
   * completes only after it settles, so a client that has the whole answer knows the call is
   * closed (its pages evicted, logged).
   */
  onEnd: (outcome: RelayOutcome, detail: string | null, status: number) => Promise<void> | void;
  /** Why the proxy broke the exchange off (its idle timeout), when it did. */
  failure?: () => UpstreamError | null;
  /** Stream every body as it comes, unframed (requests the proxy does not fold). */
  raw?: boolean;
  /**
   * Ends the client's connection at once: how an unframed body cut off midway reaches the
   * client broken. Without it the body stream errors, and the HTTP server prints the error's
   * stack and writes an `Error: …` line into the client's body before closing.
   */
  breakClient?: () => void;
}

const EMPTY_STATUS = new Set([204, 205, 304]);

/**
 * The client's response for an upstream response, byte for byte. A server-sent event stream is
 * forwarded as it arrives, one complete event at a time (so a stream cut off mid-event ends
 * with a clean error event in the provider's shape instead of half an event); anything else is
 * read whole first, so a response cut off early becomes a 502 in the provider's error shape.
 *
 * @example
 * return relay(upstreamResponse, { api: 'anthropic', headers: { 'x-contextfold-saved-tokens': '812' }, onEnd });
 */
export function relay(res: IncomingMessage, options: RelayOptions): Promise<Response> {
  const status = res.statusCode ?? 502;
  const headers = responseHeaders(res, options.headers);
  let ended: Promise<void> | null = null;
  const end = (outcome: RelayOutcome, detail: string | null, at = status): Promise<void> => {
    ended ??= Promise.resolve()
      .then(() => options.onEnd(outcome, detail, at))
      .catch(() => undefined);
    return ended;
  };
  const cutOff = (what: string): Cut => {
    const f = options.failure?.() ?? null;
    return f?.failure === 'timeout'
      ? { outcome: 'timeout', status: 504, detail: f.message, code: 'upstream_timeout' }
      : {
          outcome: 'dropped',
          status: 502,
          detail: `the upstream ${what} ended early`,
          code: 'upstream_dropped',
        };
  };
  const type = String(res.headers['content-type'] ?? '');
  if (EMPTY_STATUS.has(status)) res.resume();
  else if (options.raw || type.includes('text/event-stream')) {
    const framed = !options.raw && res.headers['content-encoding'] === undefined;
    const body = eventStream(
      res,
      framed ? options.api : null,
      end,
      () => cutOff('stream'),
      options.breakClient,
    );
    return Promise.resolve(new Response(body, { status, headers }));
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      const body = EMPTY_STATUS.has(status) ? null : Buffer.concat(chunks);
      void end('ok', null).then(() => resolve(new Response(body, { status, headers })));
    });
    res.on('close', () => {
      if (res.complete) return;
      const cut = cutOff('response');
      const h = new Headers({ 'content-type': 'application/json', ...options.headers });
      const answer = new Response(errorBody(options.api, cut.status, cut.detail, cut.code), {
        status: cut.status,
        headers: h,
      });
      void end(cut.outcome, cut.detail, cut.status).then(() => resolve(answer));
    });
    res.on('error', () => undefined);
  });
}

/** How an upstream response that broke off midway is reported: dropped, or timed out. */
interface Cut {
  outcome: RelayOutcome;
  status: number;
  detail: string;
  code: string;
}

/**
 * The response body as a stream. With an API (an uncompressed event stream), complete events
 * only, and an error event if it breaks off; without one (compressed, or not ours), the bytes as
 * they come, and a broken stream if it breaks off.
 */
function eventStream(
  res: IncomingMessage,
  api: ApiKind | null,
  end: (outcome: RelayOutcome, detail: string | null) => Promise<void>,
  cutOff: () => Cut,
  breakClient: (() => void) | undefined,
): ReadableStream<Uint8Array> {
  const framed = api !== null;
  // The bytes after the last complete event, as they came (joined only when an event ends), and
  // the last few of them: an event's end is searched for in each new chunk only, so one huge
  // event costs its length, not its length squared (16 MB took 7.7 s, 32 MB 23 s).
  let held: Buffer[] = [];
  let heldBytes = 0;
  let tail: Buffer = Buffer.alloc(0);
  let open = true;
  // While the client is not reading, the upstream is paused, not idle: its idle timeout is off
  // until the client reads again (a client that stopped reading for --timeout got the stream
  // cut, with the upstream blamed for going silent).
  let idleMs: number | null = null;
  const hold = (): void => {
    res.pause();
    const socket = res.socket;
    if (idleMs !== null || !socket) return;
    idleMs = socket.timeout ?? 0;
    socket.setTimeout(0);
  };
  const release = (): void => {
    if (idleMs !== null) res.socket?.setTimeout(idleMs);
    idleMs = null;
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const push = (b: Uint8Array): void => {
        if (!open || b.byteLength === 0) return;
        controller.enqueue(b);
        if ((controller.desiredSize ?? 1) <= 0 && !res.complete) hold();
      };
      res.on('data', (chunk: Buffer) => {
        if (!framed) return push(chunk);
        const probe = tail.length === 0 ? chunk : Buffer.concat([tail, chunk]);
        const cut = lastEventEnd(probe);
        held.push(chunk);
        heldBytes += chunk.length;
        if (cut > 0) {
          const all = Buffer.concat(held, heldBytes);
          const at = heldBytes - probe.length + cut;
          push(all.subarray(0, at));
          held = at < heldBytes ? [all.subarray(at)] : [];
          heldBytes -= at;
        }
        tail = probe.subarray(Math.max(cut, probe.length - 3));
      });
      res.on('end', () => {
        release();
        push(Buffer.concat(held, heldBytes));
        void end('ok', null).then(() => {
          if (open) controller.close();
          open = false;
        });
      });
      res.on('close', () => {
        if (res.complete || !open) return;
        const cut = cutOff();
        void end(cut.outcome, cut.detail).then(() => {
          if (!open) return;
          open = false;
          if (api === null) {
            return breakClient ? breakClient() : controller.error(new Error(cut.detail));
          }
          controller.enqueue(new TextEncoder().encode(sseError(api, cut.detail, cut.status)));
          controller.close();
        });
      });
      res.on('error', () => undefined);
    },
    pull() {
      release();
      res.resume();
    },
    cancel() {
      open = false;
      res.destroy();
      void end('client_closed', 'the client closed the stream');
    },
  });
}
