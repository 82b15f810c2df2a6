import type { RecallResponse, ScanPickView, ScanResponse } from '../api-types.js';
import { api } from './api.js';
import { archivedText, type Child, h, num, replace, table } from './dom.js';
import { patch } from './route.js';

function stepRow(step: number, cells: Child[], testid: string): HTMLElement {
  return h(
    'tr',
    { testid, attrs: { 'data-step': String(step) }, activate: () => patch({ node: step }) },
    h('td', { class: 'num' }, step),
    cells.map((c) => h('td', {}, c)),
  );
}

function recallView(r: RecallResponse): HTMLElement {
  if (r.candidates.length === 0)
    return h(
      'p',
      { class: 'muted', testid: 'recall-empty' },
      `no archived step matches “${r.query}”`,
    );
  return h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      `${num(r.total)} candidate(s)${r.total > r.candidates.length ? `, first ${r.candidates.length} shown` : ''}`,
    ),
    table(
      { class: 'grid clickable', testid: 'recall-results' },
      ['step', 'status', 'coverage', 'score', 'summary'],
      r.candidates.map((c) =>
        stepRow(c.step_id, [c.status, c.coverage, c.score, archivedText(c.summary)], 'recall-row'),
      ),
    ),
  );
}

function picksTable(picks: ScanPickView[], testid: string): HTMLElement {
  return table(
    { class: 'grid clickable', testid },
    ['step', 'cost (tokens)', 'matched keys', 'label', 'with'],
    picks.map((p) =>
      stepRow(
        p.step_id,
        [
          num(p.cost),
          p.matched_terms.join(', '),
          p.status ?? '',
          p.companion_of !== null
            ? `companion of ${p.companion_of}`
            : p.alternative_of !== null
              ? `alternative of ${p.alternative_of}`
              : '',
        ],
        'scan-row',
      ),
    ),
  );
}

function scanView(r: ScanResponse): HTMLElement {
  return h(
    'div',
    {},
    h(
      'p',
      { class: 'muted' },
      `mode ${r.mode} · ${r.ms} ms · query keys: `,
      h('span', { class: 'mono', testid: 'scan-terms' }, r.query_terms.join(' ') || '(none)'),
    ),
    r.selected.length === 0
      ? h('p', { testid: 'scan-empty' }, 'Nothing would be paged in for this prompt.')
      : picksTable(r.selected, 'scan-results'),
    r.budget_dropped.length === 0
      ? null
      : h(
          'div',
          {},
          h('h4', {}, 'over the per-turn budget (dropped this turn)'),
          picksTable(r.budget_dropped, 'scan-dropped'),
        ),
  );
}

/** One box of the search page: its section, the text it searches for, and its search. */
interface SearchBox {
  section: HTMLElement;
  field: HTMLInputElement | HTMLTextAreaElement;
  run: () => Promise<void>;
}

/** Explicit recall: a query box (Enter or the button runs it) and its candidates. */
function recallBox(store: string, params: URLSearchParams): SearchBox {
  const q = h('input', {
    testid: 'recall-input',
    attrs: { type: 'search', placeholder: 'e.g. PostgreSQL port', 'aria-label': 'recall query' },
  });
  q.value = params.get('q') ?? '';
  const recallOut = h('div', { testid: 'recall-out' });
  const recallBtn = h('button', { testid: 'recall-button' }, 'Recall');
  const runRecall = async (): Promise<void> => {
    if (q.value.trim() === '') return;
    replace(recallOut, h('p', { class: 'muted' }, 'searching…'));
    try {
      replace(
        recallOut,
        recallView(await api<RecallResponse>('recall', { store, q: q.value, limit: 50 })),
      );
    } catch (e) {
      replace(recallOut, h('p', { class: 'error' }, (e as Error).message));
    }
  };
  recallBtn.addEventListener('click', () => void runRecall());
  q.addEventListener('keydown', (e) => {
    if ((e as KeyboardEvent).key === 'Enter') void runRecall();
  });
  const section = h(
    'section',
    {},
    h('h2', {}, 'Recall'),
    h(
      'p',
      { class: 'muted' },
      'Explicit recall (CONF-04): every archived step whose terms match, labelled chronologically.',
    ),
    h('div', { class: 'row' }, q, recallBtn),
    recallOut,
  );
  return { section, field: q, run: runRecall };
}

function modeSelect(value: string): HTMLSelectElement {
  const mode = h(
    'select',
    { testid: 'scan-mode', attrs: { 'aria-label': 'retrieval mode' } },
    h('option', { attrs: { value: '' } }, 'store default'),
    h('option', { attrs: { value: 'ranked' } }, 'ranked'),
    h('option', { attrs: { value: 'reference' } }, 'reference (IPCF RGSC)'),
  );
  mode.value = value;
  return mode;
}

/** "What would be paged for this prompt": a prompt box, a retrieval mode, and the scan's picks. */
function scanBox(store: string, params: URLSearchParams): SearchBox {
  const prompt = h('textarea', {
    testid: 'scan-input',
    attrs: {
      rows: '3',
      placeholder: 'a user prompt, e.g. Which port did we set for PostgreSQL?',
      'aria-label': 'prompt',
    },
  });
  prompt.value = params.get('prompt') ?? '';
  const mode = modeSelect(params.get('mode') ?? '');
  const scanOut = h('div', { testid: 'scan-out' });
  const scanBtn = h('button', { testid: 'scan-button' }, 'What would be paged?');
  const runScan = async (): Promise<void> => {
    if (prompt.value.trim() === '') return;
    replace(
      scanOut,
      h('p', { class: 'muted' }, 'scanning (the first ranked scan of a store reads every node)…'),
    );
    try {
      replace(
        scanOut,
        scanView(
          await api<ScanResponse>('scan', {
            store,
            q: prompt.value,
            ...(mode.value ? { mode: mode.value } : {}),
          }),
        ),
      );
    } catch (e) {
      replace(scanOut, h('p', { class: 'error' }, (e as Error).message));
    }
  };
  scanBtn.addEventListener('click', () => void runScan());
  const section = h(
    'section',
    {},
    h('h2', {}, 'What would be paged for this prompt'),
    h(
      'p',
      { class: 'muted' },
      'The scan the session runs before a model call. Scan only: nothing is paged in, evicted or recorded.',
    ),
    prompt,
    h('div', { class: 'row' }, mode, scanBtn),
    scanOut,
  );
  return { section, field: prompt, run: runScan };
}

/** Recall, and "what would be paged for this prompt" (a scan: nothing is paged in or recorded). */
export async function renderSearch(
  main: HTMLElement,
  store: string,
  params: URLSearchParams,
): Promise<void> {
  const recall = recallBox(store, params);
  const scan = scanBox(store, params);
  replace(main, h('h1', {}, 'Search'), recall.section, scan.section);
  if (recall.field.value) await recall.run();
  if (scan.field.value) await scan.run();
}
