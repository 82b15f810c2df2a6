import { performance } from 'node:perf_hooks';
import type { ContextPack } from '../../harness/pack.js';
import { beginCall, type CallReport, callReport, endCall } from '../../harness/per-call.js';
import type { Session } from '../../harness/session.js';
import { isUsageError } from '../../protocol/errors.js';
import { anthropicUpstream } from './anthropic-request.js';
import type { CallOutcome, Endpoint, ProxyLogLine } from './call-log.js';
import { reportHeaders, SESSION_HEADER, upstreamHeaders } from './headers.js';
import { openAiUpstream } from './openai-request.js';
import { passthrough } from './passthrough.js';
import type { ApiKind } from './provider-errors.js';
import { errorResponse, type ProxyContext } from './proxy-context.js';
import { relay } from './relay.js';
import { type ParsedRequest, parseModelRequest, RefusedRequest, readBody } from './request-body.js';
import { checkSessionId, derivedSessionId } from './session-pool.js';
import { type ConnectedRequest, connectUpstream, UpstreamError, upstreamUrl } from './upstream.js';
import type { UpstreamBody } from './upstream-body.js';

/** The dialect of each folded endpoint. */
export const ENDPOINT_API: Record<Endpoint, ApiKind> = {
  messages: 'anthropic',
  count_tokens: 'anthropic',
  'chat.completions': 'openai',
};

const ms = (from: number): number => Math.round((performance.now() - from) * 100) / 100;

function upstreamStatus(e: UpstreamError): number {
  return e.failure === 'timeout' ? 504 : 502;
}

function upstreamBody(parsed: ParsedRequest, pack: ContextPack): UpstreamBody {
  return parsed.api === 'anthropic'
    ? anthropicUpstream(parsed.body, parsed.history, pack)
    : openAiUpstream(parsed.body, parsed.history, pack);
}

/** The call's session, pack and upstream body: the only part that writes to a store. */
interface Prepared {
  id: string;
  session: Session;
  report: CallReport;
  bytes: Uint8Array;
  warnings: string[];
}

async function prepare(
  ctx: ProxyContext,
  base: string,
  parsed: ParsedRequest,
  raw: Uint8Array,
): Promise<Prepared> {
  const { id, session } = await ctx.pool.resolve(base, parsed.history.messages);
  try {
    const pack = await beginCall(session, parsed.history.messages);
    const report = callReport(session, pack);
    const built = upstreamBody(parsed, pack);
    const bytes = built.unchanged ? raw : Buffer.from(JSON.stringify(built.body), 'utf8');
    return { id, session, report, bytes, warnings: built.warnings };
  } catch (e) {
    await endCall(session).catch(() => undefined);
    throw e;
  }
}

/**
 * One folded model call (`/v1/messages`, `/v1/messages/count_tokens`, `/v1/chat/completions`):
 * read and check the request (nothing is touched if it is bad), take the conversation's lock,
 * connect upstream (nothing is touched if that fails), build the pack through the session,
 * send it, relay the answer byte for byte, and end the call (this call's pages leave) when the
 * answer is complete, broken off, or abandoned. One log line per call.
 */
export async function modelCall(
  ctx: ProxyContext,
  req: Request,
  pathAndQuery: string,
  endpoint: Endpoint,
): Promise<Response> {
  const t0 = performance.now();
  const api = ENDPOINT_API[endpoint];
  const refuse = (status: number, outcome: CallOutcome, error: string): Response => {
    ctx.log({ kind: 'refused', api, endpoint, status, outcome, error, ms: ms(t0) });
    return errorResponse(api, status, error);
  };
  let parsed: ParsedRequest;
  let raw: Uint8Array;
  let base: string;
  try {
    raw = await readBody(req, ctx.maxBodyBytes);
    parsed = parseModelRequest(api, raw);
    const named = req.headers.get(SESSION_HEADER);
    base = named ? checkSessionId(named) : derivedSessionId(api, parsed.history.messages);
  } catch (e) {
    if (e instanceof RefusedRequest) return refuse(e.status, 'error', e.message);
    if (isUsageError(e)) return refuse(400, 'error', e.message);
    throw e;
  }
  // Nothing to fold: the upstream decides what an empty conversation gets.
  if (parsed.history.messages.length === 0) return passthrough(ctx, req, pathAndQuery, raw);
  const release = await ctx.pool.lock(base);
  const tUp = performance.now();
  let connected: ConnectedRequest;
  try {
    connected = await connectUpstream(
      ctx.target,
      upstreamUrl(ctx.target.base, pathAndQuery),
      'POST',
      upstreamHeaders(req.headers),
    );
  } catch (e) {
    release();
    if (e instanceof UpstreamError) return refuse(upstreamStatus(e), e.failure, e.message);
    throw e;
  }
  const connectMs = ms(tUp);
  const tPack = performance.now();
  let p: Prepared;
  try {
    p = await prepare(ctx, base, parsed, raw);
  } catch (e) {
    connected.abort();
    release();
    const message = e instanceof Error ? e.message : String(e);
    return refuse(500, 'error', `contextfold could not build the prompt: ${message}`);
  }
  const packMs = ms(tPack);
  const tSend = performance.now();
  let finished: Promise<void> | null = null;
  const finish = (status: number, outcome: CallOutcome, error: string | null): Promise<void> => {
    finished ??= close(status, outcome, error);
    return finished;
  };
  const close = (status: number, outcome: CallOutcome, error: string | null): Promise<void> => {
    const upstream = Math.round((connectMs + ms(tSend)) * 100) / 100;
    return endCall(p.session)
      .then((evicted) => {
        p.report.evicted = evicted;
      })
      .catch((e: unknown) => {
        error = `${error ? `${error}; ` : ''}ending the call failed: ${(e as Error).message}`;
      })
      .finally(() => {
        release();
        const total = ms(t0);
        ctx.log({
          kind: 'call',
          api,
          endpoint,
          session: p.id,
          status,
          outcome,
          stream: (parsed.body as { stream?: unknown }).stream === true,
          ms: {
            total,
            pack: packMs,
            upstream,
            overhead: Math.round((total - packMs - upstream) * 100) / 100,
          },
          ...p.report,
          ...(error ? { error } : {}),
          ...(p.warnings.length > 0 ? { proxy_warnings: p.warnings } : {}),
        } as ProxyLogLine);
      });
  };
  const headers = reportHeaders(p.id, p.report);
  try {
    const res = await connected.send(p.bytes);
    return await relay(res, {
      api,
      headers,
      onEnd: (outcome, detail) => finish(res.statusCode ?? 502, outcome, detail),
    });
  } catch (e) {
    const err = e instanceof UpstreamError ? e : new UpstreamError('dropped', String(e));
    await finish(upstreamStatus(err), err.failure, err.message);
    return errorResponse(api, upstreamStatus(err), err.message, headers);
  }
}
