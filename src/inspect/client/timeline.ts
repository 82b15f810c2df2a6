import type { LayerTokens, TimelineResponse, TimelineRow } from '../api-types.js';
import { api } from './api.js';
import { badge, h, num, replace } from './dom.js';
import { go, pageOffset, patch } from './route.js';

const PAGE = 100;
const SEGMENTS: (keyof LayerTokens)[] = ['L3', 'L2', 'L1', 'L0', 'pages'];
const LABELS: Record<keyof LayerTokens, string> = {
  L3: 'L3 pinned',
  L2: 'L2 folded records',
  L1: 'L1 recent turns',
  L0: 'L0 prompt',
  pages: 'L0 paged-in',
};

/** The stacked bar of one pack: tokens by layer, with the baseline and the budget marked. */
function bar(r: TimelineRow, scale: number): HTMLElement {
  const el = h('div', { class: 'bar', testid: 'bar' });
  const pct = (n: number): string => `${((100 * n) / scale).toFixed(3)}%`;
  if (r.layers) {
    for (const s of SEGMENTS) {
      const n = r.layers[s];
      if (n === 0) continue;
      const seg = h('div', {
        class: `seg ${s}`,
        title: `${LABELS[s]}: ${num(n)} tokens`,
        testid: `seg-${s}`,
      });
      seg.style.width = pct(n);
      el.append(seg);
    }
  } else {
    const seg = h('div', { class: 'seg unknown', title: `${num(r.tokens)} tokens` });
    seg.style.width = pct(r.tokens);
    el.append(seg);
  }
  const base = h('div', { class: 'marker baseline', title: `baseline ${num(r.baseline_tokens)}` });
  base.style.left = pct(r.baseline_tokens);
  const budget = h('div', { class: 'marker budget', title: `budget ${num(r.budget)}` });
  budget.style.left = pct(r.budget);
  el.append(base, budget);
  return el;
}

function chips(r: TimelineRow): HTMLElement {
  const c = (kind: string, text: string, step?: number) =>
    h(
      'span',
      {
        class: `chip ${kind}`,
        testid: `chip-${kind}`,
        ...(step !== undefined ? { attrs: { 'data-step': String(step) } } : {}),
      },
      text,
    );
  return h(
    'div',
    { class: 'chips' },
    r.folded.map((f) => c('folded', `folded ${f.step_id} (${f.reason})`, f.step_id)),
    r.paged_in.map((p) =>
      c(
        'paged',
        `paged in ${p.step_id} ← ${p.matched_terms.join(', ') || '(no keys)'} · ${num(p.tokens)} tok${p.truncated ? ' · truncated' : ''}`,
        p.step_id,
      ),
    ),
    r.refused.map((f) => c('refused', `refused ${f.step_id}: ${f.error}`, f.step_id)),
    r.evicted.length > 0 ? c('evicted', `evicted ${r.evicted.join(', ')}`) : null,
    r.compressed.map((x) =>
      c('compressed', `${x.strategy} ${x.layer} ${x.step_id} → ${x.kept_step_id}`),
    ),
    r.truncated.map((t) =>
      c(
        'truncated',
        `${t.persistent ? 'window' : 'dropped this pack'} ${t.layer}: ${t.steps.length} step(s)`,
      ),
    ),
    r.warnings.map((w) => c('warning', w)),
  );
}

function rowView(r: TimelineRow, scale: number): HTMLElement {
  return h(
    'div',
    {
      class: `trow${r.over_budget ? ' over' : ''}`,
      testid: 'timeline-row',
      attrs: { 'data-turn': String(r.turn) },
      activate: () => go('pack', { turn: r.turn }),
    },
    h(
      'div',
      { class: 'tmeta' },
      h('b', {}, `turn ${r.turn}`),
      h('span', { class: 'muted' }, ` step ${r.step_id}`),
    ),
    h(
      'div',
      { class: 'tnums', testid: 'row-tokens' },
      `${num(r.tokens)} / ${num(r.budget)}`,
      h('span', { class: 'muted' }, ` base ${num(r.baseline_tokens)}`),
    ),
    bar(r, scale),
    chips(r),
  );
}

function replayBadge(t: TimelineResponse): HTMLElement {
  if (t.replay.error) return badge('bad', `cannot replay: ${t.replay.error}`, 'replay-status');
  if (t.replay.matches)
    return badge('ok', 'replay rebuilds every pack as recorded', 'replay-status');
  return badge('warn', `replay differs from the log: ${t.replay.mismatch ?? ''}`, 'replay-status');
}

function legend(): HTMLElement {
  return h(
    'div',
    { class: 'legend' },
    SEGMENTS.map((s) => h('span', {}, h('i', { class: `seg ${s}` }), LABELS[s])),
    h('span', {}, h('i', { class: 'marker-key baseline' }), 'baseline (without pages)'),
    h('span', {}, h('i', { class: 'marker-key budget' }), 'budget'),
  );
}

/** The session timeline: one row per pack; click a row to open its pack. */
export async function renderTimeline(
  main: HTMLElement,
  store: string,
  params: URLSearchParams,
): Promise<void> {
  const offset = pageOffset(params);
  const t = await api<TimelineResponse>('timeline', { store, offset, limit: PAGE });
  if (!t.recorded) {
    replace(
      main,
      h('h1', {}, 'Session timeline'),
      h('p', { testid: 'no-session' }, 'No session is recorded in this store (no events.jsonl).'),
    );
    return;
  }
  const scale = Math.max(1, ...t.rows.map((r) => Math.max(r.tokens, r.budget))) * 1.02;
  const prev = h('button', { testid: 'timeline-prev' }, '‹ earlier');
  const next = h('button', { testid: 'timeline-next' }, 'later ›');
  // The server's offset: one past the end is moved back to the last page.
  const at = t.offset;
  prev.disabled = at === 0;
  next.disabled = at + t.rows.length >= t.turns;
  prev.addEventListener('click', () => patch({ offset: Math.max(0, at - PAGE) }));
  next.addEventListener('click', () => patch({ offset: at + PAGE }));
  replace(
    main,
    h('h1', {}, 'Session timeline'),
    h(
      'p',
      { testid: 'timeline-summary' },
      `${num(t.turns)} packs · ${num(t.events)} events · budget ${t.budget === null ? '?' : num(t.budget)} · tokenizer ${t.tokenizer ?? '?'} `,
      replayBadge(t),
    ),
    legend(),
    h(
      'div',
      { class: 'pager' },
      prev,
      h('span', {}, `turns ${at}–${at + t.rows.length - 1} of ${t.turns}`),
      next,
    ),
    h(
      'div',
      { class: 'timeline', testid: 'timeline' },
      t.rows.map((r) => rowView(r, scale)),
    ),
  );
}
