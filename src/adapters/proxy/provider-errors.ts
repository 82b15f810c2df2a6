/** The two API dialects the proxy speaks. */
export type ApiKind = 'anthropic' | 'openai';

const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const OPENAI_CODES: Record<number, string> = {
  413: 'request_too_large',
  502: 'upstream_unreachable',
  504: 'upstream_timeout',
};

/**
 * An error response body in the provider's own shape, so the client's SDK raises its usual
 * error: Anthropic `{ type: 'error', error: { type, message } }`, OpenAI `{ error: { message,
 * type, param, code } }`.
 *
 * @example
 * errorBody('anthropic', 413, 'request body is over the limit');
 */
export function errorBody(api: ApiKind, status: number, message: string, code?: string): string {
  if (api === 'anthropic') {
    const type = ANTHROPIC_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    return JSON.stringify({ type: 'error', error: { type, message }, request_id: null });
  }
  const type = status >= 500 ? 'server_error' : 'invalid_request_error';
  const fallback = OPENAI_CODES[status] ?? null;
  return JSON.stringify({ error: { message, type, param: null, code: code ?? fallback } });
}

/**
 * One server-sent event carrying an error in the provider's shape: what a stream that broke
 * after its first bytes ends with (the status line is already sent by then).
 *
 * @example
 * sseError('openai', 'the upstream stream ended early');
 */
export function sseError(api: ApiKind, message: string, status = 502): string {
  if (api === 'anthropic') {
    return `event: error\ndata: ${errorBody('anthropic', status, message)}\n\n`;
  }
  const code = status === 504 ? 'upstream_timeout' : 'upstream_dropped';
  return `data: ${errorBody('openai', status, message, code)}\n\n`;
}

/** Which dialect a request path (or, for other paths, its headers) speaks. */
export function apiOf(path: string, headers: Headers): ApiKind {
  if (path.startsWith('/v1/messages') || path.startsWith('/v1/complete')) return 'anthropic';
  if (path.startsWith('/v1/chat/') || path.startsWith('/v1/responses')) return 'openai';
  return headers.has('anthropic-version') || headers.has('x-api-key') ? 'anthropic' : 'openai';
}
