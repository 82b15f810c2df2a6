import { performance } from 'node:perf_hooks';
import type { ContextPack } from '../../harness/pack.js';
import { beginCall, type CallReport, callReport, endCall } from '../../harness/per-call.js';
import type { Session } from '../../harness/session.js';
import { isStepConflictError, isUsageError } from '../../protocol/errors.js';
import { anthropicUpstream } from './anthropic-request.js';
import type { CallOutcome, Endpoint } from './call-log.js';
import { reportHeaders, SESSION_HEADER, upstreamHeaders } from './headers.js';
import type { ModelVerdict } from './model-check.js';
import { openAiUpstream } from './openai-request.js';
import { passthrough } from './passthrough.js';
import type { ApiKind } from './provider-errors.js';
import { errorResponse, type ProxyContext } from './proxy-context.js';
import { relay } from './relay.js';
import { type ParsedRequest, parseModelRequest, RefusedRequest, readBody } from './request-body.js';
import { checkSessionId, derivedSessionId } from './session-pool.js';
import { spliceBody } from './splice-body.js';
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

/**
 * The bytes of a rebuilt body: the client's own with only the members the pack changed
 * (`messages`, `system`) replaced, so fields the proxy does not know keep their exact bytes
 * (`JSON.parse` then `JSON.stringify` turned 12345678901234567890 into …7000 and 1e400 into
 * null); serialised whole only when the client's bytes cannot be spliced.
 */
function bodyBytes(c: Checked, body: Record<string, unknown>): Uint8Array {
  const own = c.parsed.body as Record<string, unknown>;
  const changed: Record<string, unknown> = Object.create(null);
  for (const [k, v] of Object.entries(body)) if (own[k] !== v) changed[k] = v;
  const dropped = Object.keys(own).some((k) => !Object.hasOwn(body, k));
  return (!dropped && spliceBody(c.raw, changed)) || Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * Where the draft of a `count_tokens` request starts: the first message the session has not
 * seen, as an index into the neutral history and into the request's `messages`. Null when the
 * request holds no new message, or the first new one shares a request message with a known one.
 */
function draftStart(
  parsed: ParsedRequest,
  known: number,
): { step: number; message: number } | null {
  const { origin } = parsed.history;
  if (known >= origin.length || known === 0) return null;
  const message = origin[known]!.message;
  if (message < 0 || origin[known - 1]!.message === message) return null;
  return { step: known, message };
}

/** The request without its draft (see {@link draftStart}). */
function draftPrefix(
  parsed: ParsedRequest,
  draft: { step: number; message: number },
): ParsedRequest {
  const history = {
    messages: parsed.history.messages.slice(0, draft.step),
    origin: parsed.history.origin.slice(0, draft.step),
  };
  // The same body type as the request's: only its message list is shorter.
  const body = { ...parsed.body, messages: parsed.body.messages.slice(0, draft.message) };
  return { ...parsed, history, body } as ParsedRequest;
}

/** The call's session, pack and upstream body: the only part that writes to a store. */
interface Prepared {
  id: string;
  session: Session;
  report: CallReport;
  bytes: Uint8Array;
  warnings: string[];
}

/** A checked request: its parse, its bytes, and the base id of its conversation. */
interface Checked {
  parsed: ParsedRequest;
  raw: Uint8Array;
  base: string;
}

const round = (x: number): number => Math.round(x * 100) / 100;

/** One call's timings, its log line and its refusals. */
class CallRun {
  readonly api: ApiKind;
  private readonly t0 = performance.now();
  connectMs = 0;
  packMs = 0;
  sentAt = 0;
  answeredAt = 0;

  constructor(
    readonly ctx: ProxyContext,
    readonly endpoint: Endpoint,
  ) {
    this.api = ENDPOINT_API[endpoint];
  }

  /** Refused before any session was touched: one log line, the provider's error shape. */
  refuse(status: number, outcome: CallOutcome, error: string): Response {
    const { api, endpoint } = this;
    this.ctx.log({ kind: 'refused', api, endpoint, status, outcome, error, ms: ms(this.t0) });
    return errorResponse(api, status, error);
  }

  /**
   * Refused because the upstream does not serve the model: its own answer goes back to the
   * client as it came (the provider's shape), and no session was touched.
   */
  unknownModel(model: string, v: Extract<ModelVerdict, { kind: 'unknown' }>): Response {
    const { api, endpoint } = this;
    const error = `the upstream does not serve the model ${JSON.stringify(model)} (GET /v1/models answered ${v.status}); nothing was written`;
    this.ctx.log({
      kind: 'refused',
      api,
      endpoint,
      status: v.status,
      outcome: 'unknown_model',
      error,
      ms: ms(this.t0),
    });
    return new Response(new Uint8Array(v.body), {
      status: v.status,
      headers: { 'content-type': v.contentType },
    });
  }

  /** The log line of a call that went through its session. */
  logCall(
    c: Checked,
    p: Prepared,
    status: number,
    outcome: CallOutcome,
    error: string | null,
  ): void {
    const total = ms(this.t0);
    const upstream = round(this.connectMs + this.answeredAt - this.sentAt);
    const close = ms(this.answeredAt);
    this.ctx.log({
      kind: 'call',
      api: this.api,
      endpoint: this.endpoint,
      session: p.id,
      status,
      outcome,
      stream: (c.parsed.body as { stream?: unknown }).stream === true,
      ms: {
        total,
        pack: this.packMs,
        upstream,
        close,
        overhead: round(total - this.packMs - upstream - close),
      },
      ...p.report,
      ...(error ? { error } : {}),
      ...(p.warnings.length > 0 ? { proxy_warnings: p.warnings } : {}),
    });
  }
}

async function check(run: CallRun, req: Request): Promise<Checked> {
  // A compressed body cannot be folded (its messages are not readable as sent); say so rather
  // than "not valid JSON". The official SDKs send plain JSON.
  const encoding = req.headers.get('content-encoding');
  if (encoding !== null && encoding.trim().toLowerCase() !== 'identity') {
    throw new RefusedRequest(
      415,
      `request body has content-encoding ${encoding}: the proxy folds plain JSON bodies; send it uncompressed`,
    );
  }
  const raw = await readBody(req, run.ctx.maxBodyBytes);
  const parsed = parseModelRequest(run.api, raw);
  const named = req.headers.get(SESSION_HEADER);
  const base = named ? checkSessionId(named) : derivedSessionId(run.api, parsed.history.messages);
  return { parsed, raw, base };
}

async function prepare(ctx: ProxyContext, c: Checked, endpoint: Endpoint): Promise<Prepared> {
  const { id, session } = await ctx.pool.resolve(c.base, c.parsed.history.messages);
  try {
    // A count of a draft (messages the session has not seen) records nothing of the draft: the
    // folded history it continues is counted with the draft as the client wrote it. Recording
    // it made the real call, with another last message, start a fork.
    const draft =
      endpoint === 'count_tokens' ? draftStart(c.parsed, session.history().length) : null;
    const parsed = draft === null ? c.parsed : draftPrefix(c.parsed, draft);
    const pack = await beginCall(session, parsed.history.messages);
    const report = callReport(session, pack);
    const built = upstreamBody(parsed, pack);
    let bytes: Uint8Array;
    if (draft === null) bytes = built.unchanged ? c.raw : bodyBytes(c, built.body);
    else {
      const messages = [
        ...(built.body.messages as unknown[]),
        ...c.parsed.body.messages.slice(draft.message),
      ];
      const same =
        messages.length === c.parsed.body.messages.length &&
        messages.every((m, i) => m === c.parsed.body.messages[i]);
      bytes = built.unchanged && same ? c.raw : bodyBytes(c, { ...built.body, messages });
    }
    return { id, session, report, bytes, warnings: built.warnings };
  } catch (e) {
    await endCall(session).catch(() => undefined);
    // A session that failed mid-change must be reopened from its log: the next call does.
    await ctx.pool.discard(id);
    throw e;
  }
}

/** Sends the pack and relays the answer; the call ends (pages evicted, logged) exactly once. */
async function exchange(
  run: CallRun,
  c: Checked,
  p: Prepared,
  connected: ConnectedRequest,
  release: () => void,
  client: AbortSignal,
  breakClient: (() => void) | undefined,
): Promise<Response> {
  let ended: Promise<void> | null = null;
  // A client that gives up before the answer is over (an SDK timeout, Ctrl-C) cancels the
  // upstream call: it would run to the end otherwise, billed, holding the conversation's lock.
  // That holds while a non-streamed answer is still arriving too, after its status line.
  const cancel = (): void => connected.abort();
  const end = (status: number, outcome: CallOutcome, error: string | null): Promise<void> => {
    if (ended) return ended;
    client.removeEventListener('abort', cancel);
    if (client.aborted) outcome = 'client_closed';
    run.answeredAt = performance.now();
    ended = endCall(p.session)
      .then((evicted) => {
        p.report.evicted = evicted;
      })
      .catch((e: unknown) => {
        error = `${error ? `${error}; ` : ''}ending the call failed: ${(e as Error).message}`;
      })
      .finally(() => {
        release();
        run.logCall(c, p, status, outcome, error);
      });
    return ended;
  };
  const headers = reportHeaders(p.id, p.report);
  run.sentAt = performance.now();
  if (client.aborted) cancel();
  else client.addEventListener('abort', cancel, { once: true });
  try {
    const res = await connected.send(p.bytes);
    return await relay(res, {
      api: run.api,
      headers,
      onEnd: (outcome, detail, status) => end(status, outcome, detail),
      failure: () => connected.failure(),
      ...(breakClient ? { breakClient } : {}),
    });
  } catch (e) {
    const err = e instanceof UpstreamError ? e : new UpstreamError('dropped', String(e));
    await end(upstreamStatus(err), err.failure, err.message);
    return errorResponse(run.api, upstreamStatus(err), err.message, headers);
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
  breakClient?: () => void,
): Promise<Response> {
  const run = new CallRun(ctx, endpoint);
  let c: Checked;
  try {
    c = await check(run, req);
  } catch (e) {
    if (e instanceof RefusedRequest) return run.refuse(e.status, 'error', e.message);
    if (isUsageError(e)) return run.refuse(400, 'error', e.message);
    throw e;
  }
  // Nothing to fold: the upstream decides what an empty conversation gets.
  if (c.parsed.history.messages.length === 0)
    return passthrough(ctx, req, pathAndQuery, c.raw, breakClient);
  const model = (c.parsed.body as { model?: unknown }).model;
  const verdict = await ctx.models?.check(run.api, model, upstreamHeaders(req.headers));
  if (verdict?.kind === 'unknown') return run.unknownModel(String(model), verdict);
  const release = await ctx.pool.lock(c.base);
  const t = performance.now();
  let connected: ConnectedRequest;
  try {
    const url = upstreamUrl(ctx.target.base, pathAndQuery);
    connected = await connectUpstream(ctx.target, url, 'POST', upstreamHeaders(req.headers));
  } catch (e) {
    release();
    if (e instanceof UpstreamError) return run.refuse(upstreamStatus(e), e.failure, e.message);
    throw e;
  }
  run.connectMs = ms(t);
  const tPack = performance.now();
  let p: Prepared;
  try {
    p = await prepare(ctx, c, endpoint).catch((e: unknown) => {
      // Another proxy on the same store (a replica) continued this conversation since this one
      // read its log, so nothing of this call was written. The session is closed on any failure;
      // opened again from its log, it takes the call from there (once: a second conflict is
      // not a stale view).
      if (!isStepConflictError(e)) throw e;
      return prepare(ctx, c, endpoint);
    });
  } catch (e) {
    connected.abort();
    release();
    const message = e instanceof Error ? e.message : String(e);
    return run.refuse(500, 'error', `contextfold could not build the prompt: ${message}`);
  }
  run.packMs = ms(tPack);
  return exchange(run, c, p, connected, release, req.signal, breakClient);
}
