import { type Context, type ErrorHandler, Hono, type MiddlewareHandler } from 'hono';
import type { RetrievalMode } from '../engine/types.js';
import {
  type ContextFoldError,
  ipcfErrorName,
  isContextFoldError,
  UsageError,
} from '../protocol/errors.js';
import type { ErrorResponse, StoresResponse } from './api-types.js';
import type { Asset } from './assets.js';
import { SECURITY_HEADERS, tokenMatches } from './security.js';
import type { StoreView } from './store-view.js';

/** What the web app serves. */
export interface InspectorAppInput {
  token: string;
  root: string;
  /** Store views by id. */
  views: ReadonlyMap<string, StoreView>;
  assets: ReadonlyMap<string, Asset>;
}

const MAX_LIMIT = 500;

function statusFor(e: ContextFoldError): 400 | 404 | 409 | 500 {
  switch (e.code) {
    case 'USAGE':
      return 400;
    case 'NODE_NOT_FOUND':
      return 404;
    case 'INTEGRITY_CHECK':
    case 'PATH_CONTAINMENT':
    case 'BROKEN_REFERENCE':
    case 'ORPHANED_NODE':
      return 409;
    default:
      return 500;
  }
}

function intParam(c: Context, name: string, fallback: number, max: number): number {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,15}$/.test(raw)) {
    throw new UsageError(`${name} must be a non-negative integer, got '${raw.slice(0, 40)}'`);
  }
  return Math.min(Number(raw), max);
}

function requiredInt(c: Context, name: string): number {
  const v = intParam(c, name, -1, 1e15);
  if (v < 0) throw new UsageError(`${name} is required (a non-negative integer)`);
  return v;
}

function textParam(c: Context, name: string): string {
  const v = c.req.query(name);
  if (v === undefined || v.trim() === '') throw new UsageError(`${name} is required`);
  return v;
}

function modeParam(c: Context): RetrievalMode | undefined {
  const m = c.req.query('mode');
  if (m === undefined || m === '') return undefined;
  if (m !== 'ranked' && m !== 'reference') {
    throw new UsageError(`mode must be 'ranked' or 'reference', got '${m.slice(0, 40)}'`);
  }
  return m;
}

/** Sets the security headers on every response, the 403s and errors included. */
const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(k, v);
};

/** Refuses a request whose path does not start with the token, or that is not GET or HEAD. */
function tokenGate(token: string): MiddlewareHandler {
  return async (c, next) => {
    const first = c.req.path.split('/')[1] ?? '';
    if (!tokenMatches(first, token)) return c.text('forbidden\n', 403);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      return c.text('read-only: only GET and HEAD\n', 405, { Allow: 'GET, HEAD' });
    }
    await next();
  };
}

/** Our errors as their HTTP status and JSON body; anything else is logged and stays opaque. */
const errorResponse: ErrorHandler = (e, c) => {
  if (isContextFoldError(e)) {
    const body: ErrorResponse = {
      error: ipcfErrorName(e.code),
      code: e.code,
      message: e.message,
      ...(typeof e.details.path === 'string' ? { path: e.details.path } : {}),
    };
    return c.json(body, statusFor(e));
  }
  process.stderr.write(`contextfold inspect: internal error: ${e.stack ?? e}\n`);
  return c.json({ error: 'InternalError', code: 'INTERNAL', message: 'internal error' }, 500);
};

/** The routes under `/<token>/`: the JSON API, then the web app's files (the catch-all, last). */
function addRoutes(app: Hono, input: InspectorAppInput): void {
  const view = (c: Context): StoreView => {
    const id = c.req.query('store') ?? '.';
    const v = input.views.get(id);
    if (!v) throw new UsageError(`no store '${id.slice(0, 200)}' here; see api/stores`);
    return v;
  };

  const base = '/:token';
  app.get(base, (c) => c.redirect(`/${input.token}/`, 302));
  app.get(`${base}/api/stores`, (c) =>
    c.json({
      root: input.root,
      stores: [...input.views.values()].map((v) => v.info),
    } satisfies StoresResponse),
  );
  app.get(`${base}/api/overview`, async (c) => c.json(await view(c).overview()));
  app.get(`${base}/api/disk`, async (c) => c.json(await view(c).disk()));
  app.get(`${base}/api/nodes`, async (c) =>
    c.json(
      await view(c).nodes(intParam(c, 'offset', 0, 1e15), intParam(c, 'limit', 50, MAX_LIMIT)),
    ),
  );
  app.get(`${base}/api/node`, async (c) => c.json(await view(c).node(requiredInt(c, 'step'))));
  app.get(`${base}/api/payload`, async (c) =>
    c.json(await view(c).payload(requiredInt(c, 'step'))),
  );
  app.get(`${base}/api/validate`, async (c) => c.json(await view(c).validate()));
  app.get(`${base}/api/recall`, async (c) =>
    c.json(await view(c).recall(textParam(c, 'q'), intParam(c, 'limit', 50, MAX_LIMIT))),
  );
  app.get(`${base}/api/scan`, async (c) =>
    c.json(await view(c).scan(textParam(c, 'q'), modeParam(c))),
  );
  app.get(`${base}/api/timeline`, async (c) =>
    c.json(
      await view(c).timeline(intParam(c, 'offset', 0, 1e15), intParam(c, 'limit', 100, MAX_LIMIT)),
    ),
  );
  app.get(`${base}/api/pack`, async (c) => c.json(await view(c).pack(requiredInt(c, 'turn'))));
  app.get(`${base}/*`, (c) => {
    const rest = c.req.path.slice(input.token.length + 2);
    const asset = input.assets.get(rest === '' ? 'index.html' : rest);
    if (!asset) return c.text('not found\n', 404);
    return c.body(new Uint8Array(asset.body), 200, { 'Content-Type': asset.type });
  });
}

/**
 * The inspector's HTTP app. Every request must start with `/<token>/` (compared in constant
 * time) or gets 403, whatever the route or method; only GET and HEAD exist, and none of them
 * writes. Every response carries the security headers (strict CSP, nosniff, no referrer).
 */
export function createInspectorApp(input: InspectorAppInput): Hono {
  const app = new Hono();
  app.use('*', securityHeaders);
  app.use('*', tokenGate(input.token));
  app.onError(errorResponse);
  addRoutes(app, input);
  return app;
}
