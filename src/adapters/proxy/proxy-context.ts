import type { ProxyLogLine } from './call-log.js';
import { type ApiKind, errorBody } from './provider-errors.js';
import type { SessionPool } from './session-pool.js';
import type { UpstreamTarget } from './upstream.js';

/** What every request of one proxy shares. */
export interface ProxyContext {
  target: UpstreamTarget;
  pool: SessionPool;
  maxBodyBytes: number;
  log: (line: ProxyLogLine) => void;
}

/** An error response in the provider's shape. */
export function errorResponse(
  api: ApiKind,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(errorBody(api, status, message), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}
