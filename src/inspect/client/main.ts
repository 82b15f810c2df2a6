import type { StoresResponse } from '../api-types.js';
import { api } from './api.js';
import { h, replace } from './dom.js';
import { closeDrawer, showDrawer } from './drawer.js';
import { renderOverview } from './overview.js';
import { renderPack } from './pack-page.js';
import { currentRoute, patch } from './route.js';
import { renderSearch } from './search.js';
import { renderTimeline } from './timeline.js';

let stores: StoresResponse | null = null;
let rendered = '';

function errorBox(e: unknown): HTMLElement {
  return h('p', { class: 'error', testid: 'error' }, e instanceof Error ? e.message : String(e));
}

async function render(): Promise<void> {
  const route = currentRoute();
  if (!stores) return;
  const store = route.params.get('store') ?? stores.stores[0]!.id;
  const select = document.getElementById('store') as HTMLSelectElement;
  select.value = store;
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a')) {
    a.classList.toggle('active', a.dataset.view === route.view);
    a.setAttribute('href', `#/${a.dataset.view}?store=${encodeURIComponent(store)}`);
  }
  const node = route.params.get('node');
  const drawerKey = `${store}|${node}`;
  // The main view re-renders only when something but the drawer changed.
  const p = new URLSearchParams(route.params);
  p.delete('node');
  const key = `${route.view}?${p.toString()}|${store}`;
  if (key !== rendered) {
    rendered = key;
    // Each render fills an element of its own: an answer that arrives after the user moved on
    // lands in a detached one, never over the view now shown.
    const view = h('div', { testid: 'view' }, h('p', { class: 'muted' }, 'loading…'));
    replace(document.getElementById('main')!, view);
    try {
      if (route.view === 'timeline') await renderTimeline(view, store, route.params);
      else if (route.view === 'pack') await renderPack(view, store, route.params);
      else if (route.view === 'search') await renderSearch(view, store, route.params);
      else await renderOverview(view, store, route.params);
    } catch (e) {
      replace(view, errorBox(e));
    }
  }
  if (node !== null && /^\d+$/.test(node)) await showDrawer(store, Number(node), drawerKey);
  else closeDrawer();
}

async function start(): Promise<void> {
  const select = document.getElementById('store') as HTMLSelectElement;
  try {
    stores = await api<StoresResponse>('stores');
  } catch (e) {
    replace(document.getElementById('main')!, errorBox(e));
    return;
  }
  replace(
    select,
    stores.stores.map((s) =>
      h('option', { attrs: { value: s.id } }, s.id === '.' ? `${s.id} (root)` : s.id),
    ),
  );
  select.addEventListener('change', () => patch({ store: select.value, node: null, offset: null }));
  document.getElementById('root-dir')!.textContent = stores.root;
  window.addEventListener('hashchange', () => void render());
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') patch({ node: null });
  });
  await render();
  document.body.dataset.ready = 'true';
}

void start();
