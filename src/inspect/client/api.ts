import type { ErrorResponse } from '../api-types.js';

/** An error the server answered with (one line, with the path when there is one). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorResponse | null,
  ) {
    super(body ? `${body.error}: ${body.message}` : `HTTP ${status}`);
  }
}

/**
 * GETs one API endpoint (relative to the page, so the URL token is kept) as JSON.
 *
 * @example
 * const o = await api<OverviewResponse>('overview', { store: '.' });
 */
export async function api<T>(
  path: string,
  params: Record<string, string | number> = {},
): Promise<T> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) q.set(k, String(v));
  const res = await fetch(`api/${path}?${q.toString()}`, {
    headers: { Accept: 'application/json' },
  });
  if (!res.ok) {
    let body: ErrorResponse | null = null;
    try {
      body = (await res.json()) as ErrorResponse;
    } catch {}
    throw new ApiError(res.status, body);
  }
  return (await res.json()) as T;
}
