/** The views of the app. */
export type ViewName = 'overview' | 'timeline' | 'pack' | 'search';

/** Where the app is: view, store and view parameters, all in the URL hash (`#/view?…`). */
export interface Route {
  view: ViewName;
  params: URLSearchParams;
}

const VIEWS: ViewName[] = ['overview', 'timeline', 'pack', 'search'];

/** The current route. */
export function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = hash.split('?', 2);
  const view = (VIEWS as string[]).includes(path) ? (path as ViewName) : 'overview';
  return { view, params: new URLSearchParams(query) };
}

/** The hash for a route. */
export function routeHash(view: ViewName, params: Record<string, string | number | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return `#/${view}${s ? `?${s}` : ''}`;
}

/** Goes to a view, keeping the store; `extra` sets view parameters. */
export function go(view: ViewName, extra: Record<string, string | number | null> = {}): void {
  const store = currentRoute().params.get('store');
  location.hash = routeHash(view, { store, ...extra });
}

/** Changes parameters of the current view (null removes one). */
export function patch(changes: Record<string, string | number | null>): void {
  const r = currentRoute();
  const params: Record<string, string | number | null> = {};
  for (const [k, v] of r.params) params[k] = v;
  location.hash = routeHash(r.view, { ...params, ...changes });
}

/**
 * The `offset` of a paged view: a whole number from 0 (anything else, such as `-5`, `2.5` or
 * `x`, is 0; one past the end the server moves back to the last page).
 */
export function pageOffset(params: URLSearchParams): number {
  const n = Number(params.get('offset') ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}
