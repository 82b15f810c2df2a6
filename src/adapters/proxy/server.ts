import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { type HttpBindings, serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { RetrievalMode, Tokenizer } from '../../engine/types.js';
import type { LiveOverflow } from '../../harness/live-excerpt.js';
import { UsageError } from '../../protocol/errors.js';
import { checkOptionKeys } from '../../protocol/option-keys.js';
import { isPgUrl } from '../../store/store-location.js';
import type { Endpoint, ProxyLogLine } from './call-log.js';
import { ENDPOINT_API, modelCall } from './model-call.js';
import { ModelChecks } from './model-check.js';
import { passthrough } from './passthrough.js';
import { errorResponse, type ProxyContext } from './proxy-context.js';
import { SessionPool } from './session-pool.js';
import { checkStoreRoot } from './store-root.js';

/** Options of {@link startProxy}. */
export interface ProxyOptions {
  /** Base URL of the model API, e.g. `https://api.anthropic.com` or `https://api.openai.com`. */
  upstream: string;
  /** Address to listen on. Default `127.0.0.1` (loopback only). */
  host?: string;
  /** Port to listen on; 0 picks a free one. Default 8787. */
  port?: number;
  /** Store root: each conversation is a session store in `<dir>/sessions/<id>/.contextfold`. Default `.contextfold`. */
  dir?: string;
  /**
   * Store root overriding `dir`: a directory, or `postgres://…?store_id=NAME` (every replica of
   * the proxy on one database; a conversation's store is `NAME/sessions/<id>`). See docs/team.md.
   */
  store?: string;
  /** Token budget of every prompt sent upstream. Default 32000. */
  budget?: number;
  /** Turns before the live one always kept verbatim. Default 10. */
  keepRecent?: number;
  /** Older turns above this many tokens are folded. Default 256. */
  foldThreshold?: number;
  tokenizer?: Tokenizer | 'o200k' | 'reference';
  retrieval?: RetrievalMode;
  /**
   * A live turn (the newest prompt or pending tool output) larger than the budget: `'excerpt'`
   * (default) sends the head and the tail of it with a marker line, so the prompt fits;
   * `'send-whole'` sends it whole, over budget. The session keeps every byte either way.
   */
  liveOverflow?: LiveOverflow;
  /**
   * @deprecated Ignored: ranked analyses live in each session store's derived index, and
   * nothing is written outside the stores.
   */
  cacheDir?: string | false;
  /** Largest request body accepted; larger ones get a 413. Default 32 MiB. */
  maxBodyBytes?: number;
  /**
   * Upstream idle timeout (connecting, waiting, between response bytes; not while the client
   * is not reading the response). Default 10 minutes.
   */
  timeoutMs?: number;
  /**
   * Ask the upstream (`GET /v1/models/{id}`, once per model) whether it serves a call's model
   * before any session is touched, so a call refused for an unknown model writes nothing.
   * Default true.
   */
  checkModels?: boolean;
  /** Sessions kept open at once (idle ones beyond are closed). Default 64. */
  maxOpenSessions?: number;
  /** Receives one line per request (see {@link ProxyLogLine}). Default: none. */
  onLog?: (line: ProxyLogLine) => void;
}

/** Every option {@link startProxy} takes (the compiler keeps this list complete). */
const PROXY_OPTION_KEYS: Record<keyof ProxyOptions, true> = {
  upstream: true,
  host: true,
  port: true,
  dir: true,
  store: true,
  budget: true,
  keepRecent: true,
  foldThreshold: true,
  tokenizer: true,
  retrieval: true,
  liveOverflow: true,
  cacheDir: true,
  maxBodyBytes: true,
  timeoutMs: true,
  checkModels: true,
  maxOpenSessions: true,
  onLog: true,
};

/** A running proxy. */
export interface RunningProxy {
  /** Base URL the proxy listens on, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  /** The environment lines that point the Anthropic and OpenAI SDKs (and Claude Code) at it. */
  env: { ANTHROPIC_BASE_URL: string; OPENAI_BASE_URL: string };
  /** Stops listening, waits for calls in flight, closes every session. */
  close(): Promise<void>;
}

function positiveInt(v: number | undefined, fallback: number, name: string, min = 1): number {
  const n = v ?? fallback;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`${name} must be an integer >= ${min}, got ${String(v)}`);
  }
  return n;
}

function upstreamBase(value: unknown): URL {
  if (typeof value !== 'string' || value === '') {
    throw new UsageError('startProxy needs { upstream }: the base URL of the model API');
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`upstream '${value}' is not a URL (e.g. https://api.anthropic.com)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`upstream '${value}' must be an http:// or https:// URL`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new UsageError(
      `upstream '${url.origin}…' must be a plain base URL (no credentials, query or fragment)`,
    );
  }
  // Clients send /v1/… paths; a base that ends in /v1 (OPENAI_BASE_URL does) made every call
  // go to /v1/v1/… and fail with the upstream's 404.
  if (/\/v1\/?$/.test(url.pathname)) {
    const root = `${url.origin}${url.pathname.replace(/\/v1\/?$/, '')}`;
    throw new UsageError(
      `upstream '${value}' ends in /v1, but clients send /v1/… paths: give the server's base without it (--upstream ${root})`,
    );
  }
  return url;
}

const ROUTES: [string, Endpoint][] = [
  ['/v1/messages', 'messages'],
  ['/v1/messages/count_tokens', 'count_tokens'],
  ['/v1/chat/completions', 'chat.completions'],
];

function pathAndQuery(req: Request): string {
  const u = new URL(req.url);
  return `${u.pathname}${u.search}`;
}

function app(ctx: ProxyContext): Hono<{ Bindings: HttpBindings }> {
  const hono = new Hono<{ Bindings: HttpBindings }>();
  // A relayed body cut off midway (not an event stream the proxy frames) ends the client's
  // connection as the upstream's ended.
  const breaker = (env: HttpBindings | undefined) => () => env?.outgoing.destroy();
  for (const [path, endpoint] of ROUTES) {
    hono.post(path, (c) =>
      modelCall(ctx, c.req.raw, pathAndQuery(c.req.raw), endpoint, breaker(c.env)),
    );
  }
  hono.all('*', (c) =>
    passthrough(ctx, c.req.raw, pathAndQuery(c.req.raw), undefined, breaker(c.env)),
  );
  hono.onError((e, c) => {
    const path = new URL(c.req.url).pathname;
    const endpoint = ROUTES.find(([p]) => p === path)?.[1] ?? 'messages';
    const message = `contextfold proxy failed: ${e instanceof Error ? e.message : String(e)}`;
    ctx.log({
      kind: 'refused',
      api: ENDPOINT_API[endpoint],
      endpoint,
      status: 500,
      outcome: 'error',
      error: message,
      ms: 0,
    });
    return errorResponse(ENDPOINT_API[endpoint], 500, message);
  });
  return hono;
}

/**
 * Starts `contextfold proxy`: an HTTP server between an unmodified client and the model API.
 * Every Anthropic Messages and OpenAI Chat Completions call is run through a harness session
 * (old verbose turns folded into verified cold storage, what the live turn needs paged in for
 * that call only) and sent upstream; the answer comes back byte for byte. Everything else
 * passes through untouched. Keys and auth headers are forwarded, never stored or logged.
 *
 * @example
 * const proxy = await startProxy({ upstream: 'https://api.anthropic.com', budget: 32_000 });
 * const client = new Anthropic({ baseURL: proxy.url });
 * // …
 * await proxy.close();
 */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  if (!options || typeof options !== 'object') {
    throw new UsageError('startProxy needs an options object: { upstream, ... }');
  }
  checkOptionKeys('startProxy', options, PROXY_OPTION_KEYS);
  const base = upstreamBase(options.upstream);
  const host = options.host ?? '127.0.0.1';
  const port = positiveInt(options.port, 8787, 'port', 0);
  if (port > 65535) throw new UsageError(`port must be at most 65535, got ${port}`);
  const where = options.store ?? options.dir ?? '.contextfold';
  const dir = isPgUrl(where) ? where : resolve(where);
  if (!isPgUrl(dir)) checkStoreRoot(dir);
  const pool = new SessionPool({
    root: dir,
    maxOpen: positiveInt(options.maxOpenSessions, 64, 'maxOpenSessions'),
    session: {
      budget: positiveInt(options.budget, 32_000, 'budget'),
      pageInToolOutput: true,
      ...(options.keepRecent !== undefined ? { keepRecent: options.keepRecent } : {}),
      ...(options.foldThreshold !== undefined ? { foldThreshold: options.foldThreshold } : {}),
      ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
      ...(options.retrieval ? { retrieval: options.retrieval } : {}),
      ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
      ...(options.liveOverflow !== undefined ? { liveOverflow: options.liveOverflow } : {}),
    },
  });
  const agents = {
    http: new http.Agent({ keepAlive: true }),
    https: new https.Agent({ keepAlive: true }),
  };
  const target = { base, timeoutMs: positiveInt(options.timeoutMs, 600_000, 'timeoutMs'), agents };
  const ctx: ProxyContext = {
    target,
    pool,
    models: options.checkModels === false ? null : new ModelChecks(target),
    maxBodyBytes: positiveInt(options.maxBodyBytes, 32 * 1024 * 1024, 'maxBodyBytes'),
    log: options.onLog ?? (() => undefined),
  };
  const server = await new Promise<ReturnType<typeof serve>>((ok, fail) => {
    const s = serve({ fetch: app(ctx).fetch, hostname: host, port }, () => ok(s));
    s.once('error', (e: NodeJS.ErrnoException) =>
      fail(
        new UsageError(
          `cannot listen on ${host}:${port}: ${e.code === 'EADDRINUSE' ? 'the port is in use (pick another with --port)' : (e.code ?? e.message)}`,
        ),
      ),
    );
  });
  const bound = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${bound}`;
  let closing: Promise<void> | null = null;
  return {
    url,
    port: bound,
    env: { ANTHROPIC_BASE_URL: url, OPENAI_BASE_URL: `${url}/v1` },
    close() {
      closing ??= (async () => {
        // `close` ends the connections idle now; one that goes idle when its call ends would
        // stay open until its keep-alive timeout (about 5 s more), so those are ended as they
        // become idle.
        const idle = setInterval(() => {
          if ('closeIdleConnections' in server) server.closeIdleConnections();
        }, 50);
        await new Promise<void>((done) => server.close(() => done()));
        clearInterval(idle);
        await pool.close();
        agents.http.destroy();
        agents.https.destroy();
      })();
      return closing;
    },
  };
}
