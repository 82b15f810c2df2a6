import type {
  DiskResponse,
  NodesResponse,
  OverviewResponse,
  ValidateResponse,
} from '../api-types.js';
import { api } from './api.js';
import { archivedText, badge, bytes, h, num, replace, table } from './dom.js';
import { pageOffset, patch } from './route.js';

const PAGE = 50;

function card(label: string, value: Node | string, testid: string): HTMLElement {
  return h(
    'div',
    { class: 'card' },
    h('div', { class: 'label' }, label),
    h('div', { class: 'value', testid }, value),
  );
}

function problemsTable(v: ValidateResponse): HTMLElement {
  return table(
    { class: 'grid', testid: 'problems' },
    ['kind', 'step', 'path', 'message'],
    v.problems.map((p) =>
      h(
        'tr',
        { testid: 'problem' },
        h('td', {}, p.kind),
        h('td', { class: 'num' }, p.step_id === null ? '–' : p.step_id),
        h('td', { class: 'mono' }, p.path),
        h('td', {}, p.message),
      ),
    ),
  );
}

function validateSection(store: string, sanitized: HTMLElement): HTMLElement {
  const out = h(
    'div',
    { testid: 'validate-result' },
    h(
      'span',
      { class: 'muted' },
      'Not run yet: validate reads and verifies every node, so it runs on request.',
    ),
  );
  const button = h('button', { testid: 'validate-button' }, 'Run validate');
  button.addEventListener('click', async () => {
    button.disabled = true;
    replace(out, h('span', { class: 'muted' }, 'validating every node…'));
    try {
      const v = await api<ValidateResponse>('validate', { store });
      replace(sanitized, num(v.sanitized), h('span', { class: 'muted' }, ` of ${num(v.checked)}`));
      replace(
        out,
        v.ok
          ? badge('ok', `ok: ${num(v.checked)} node(s) verified, no problems`, 'validate-status')
          : badge(
              'bad',
              `${num(v.problems_total)} problem(s) in ${num(v.checked)} node(s)`,
              'validate-status',
            ),
        h('span', { class: 'muted' }, ` ${v.ms} ms`),
        v.problems_total > v.problems.length
          ? h(
              'p',
              { class: 'muted', testid: 'problems-cut' },
              `The first ${num(v.problems.length)} are listed; contextfold validate lists them all.`,
            )
          : null,
        v.ok ? null : problemsTable(v),
        ...v.warnings.map((w) =>
          h(
            'p',
            { class: 'warn', testid: 'validate-warning' },
            `warning (${w.code}): ${w.message}`,
          ),
        ),
      );
    } catch (e) {
      replace(out, badge('bad', (e as Error).message, 'validate-status'));
    } finally {
      button.disabled = false;
    }
  });
  return h('section', {}, h('h2', {}, 'Validate'), h('div', { class: 'row' }, button, out));
}

function nodeTable(page: NodesResponse): HTMLElement {
  const head = ['step', 'summary', 'tokens', 'folded at', 'files', 'errors', 'evicted'];
  return table(
    { class: 'grid clickable', testid: 'node-table' },
    head,
    page.rows.map((r) =>
      h(
        'tr',
        {
          testid: 'node-row',
          attrs: { 'data-step': String(r.step_id) },
          activate: () => patch({ node: r.step_id }),
        },
        h('td', { class: 'num' }, r.step_id),
        h('td', { class: 'summary' }, archivedText(r.summary)),
        h('td', { class: 'num' }, num(r.token_estimate)),
        h('td', { class: 'mono' }, r.folded_at),
        h('td', { class: 'num' }, r.files),
        h('td', { class: 'num' }, r.errors),
        h('td', {}, r.evicted ? 'yes' : ''),
      ),
    ),
  );
}

function pager(page: NodesResponse): HTMLElement {
  const last = page.offset + page.rows.length;
  const prev = h('button', { testid: 'prev-page' }, '‹ previous');
  const next = h('button', { testid: 'next-page' }, 'next ›');
  prev.disabled = page.offset === 0;
  next.disabled = last >= page.total;
  prev.addEventListener('click', () => patch({ offset: Math.max(0, page.offset - PAGE) }));
  next.addEventListener('click', () => patch({ offset: page.offset + PAGE }));
  const first = page.total === 0 ? 0 : page.offset + 1;
  return h(
    'div',
    { class: 'pager' },
    prev,
    h('span', { testid: 'page-range' }, `${num(first)}–${num(last)} of ${num(page.total)}`),
    next,
  );
}

/** The store overview: counts (no node is read), validate on request, the node list paged. */
export async function renderOverview(
  main: HTMLElement,
  store: string,
  params: URLSearchParams,
): Promise<void> {
  const offset = pageOffset(params);
  const [o, page] = await Promise.all([
    api<OverviewResponse>('overview', { store }),
    api<NodesResponse>('nodes', { store, offset, limit: PAGE }),
  ]);
  const sanitized = h('span', { class: 'muted' }, 'run validate');
  const disk = h('span', { class: 'muted' }, '…');
  replace(
    main,
    h('h1', {}, 'Store ', h('span', { class: 'mono' }, o.store.id)),
    h('p', { class: 'mono muted' }, o.store.dir),
    ...o.warnings.map((w) => h('p', { class: 'warn', testid: 'store-warning' }, `warning: ${w}`)),
    h(
      'div',
      { class: 'cards', testid: 'overview-cards' },
      card('nodes', num(o.nodes), 'stat-nodes'),
      card('evicted at least once', num(o.evicted), 'stat-evicted'),
      card('payload tokens (estimate)', num(o.total_token_estimate), 'stat-tokens'),
      card('on disk', disk, 'stat-disk'),
      card('sanitized', sanitized, 'stat-sanitized'),
      card('journal entries', num(o.journal_entries), 'stat-journal'),
      card('tokenizer · retrieval', `${o.tokenizer} · ${o.retrieval}`, 'stat-tokenizer'),
      card(
        'page-in caps',
        `${num(o.per_call_cap)} per call · ${num(o.per_turn_cap)} per turn`,
        'stat-caps',
      ),
      card('session log', o.events_bytes === null ? 'none' : bytes(o.events_bytes), 'stat-events'),
    ),
    validateSection(store, sanitized),
    h('section', {}, h('h2', {}, 'Folded nodes'), pager(page), nodeTable(page)),
  );
  void api<DiskResponse>('disk', { store }).then(
    (d) =>
      replace(
        disk,
        bytes(d.total_bytes),
        h('span', { class: 'muted' }, ` · ${num(d.cold_node_files)} node files`),
      ),
    () => replace(disk, '?'),
  );
}
