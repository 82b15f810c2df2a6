import type { PackLayerView, PackMessageView, PackResponse } from '../api-types.js';
import { api } from './api.js';
import { archivedText, badge, h, num, replace } from './dom.js';
import { go, patch } from './route.js';

const LAYER_NAMES: Record<PackLayerView['layer'], string> = {
  L3: 'L3 · system and pinned notes',
  L2: 'L2 · folded-step records',
  L1: 'L1 · recent turns',
  L0: 'L0 · the prompt, paged-in archive, pending tool output',
};

function messageView(m: PackMessageView): HTMLElement {
  const body = h('pre', { class: 'msg-body' });
  for (const s of m.segments) {
    if (s.kind === 'archived') {
      body.append(
        h(
          'span',
          {
            class: 'archived',
            testid: 'archived-block',
            attrs: { 'data-step': String(s.step_id) },
            title: `archived step ${s.step_id}, paged in for this turn: click (or Enter) to open the node`,
            activate: () => patch({ node: s.step_id }),
          },
          archivedText(s.text),
        ),
      );
    } else {
      body.append(...archivedText(s.text));
    }
  }
  return h(
    'div',
    { class: `msg ${m.role}`, testid: 'pack-message' },
    h('div', { class: 'msg-head' }, m.header),
    body,
  );
}

function layerView(l: PackLayerView): HTMLElement {
  const details = h(
    'details',
    { class: `layer ${l.layer}`, testid: `layer-${l.layer}` },
    h(
      'summary',
      {},
      h('b', {}, LAYER_NAMES[l.layer]),
      h(
        'span',
        { class: 'muted' },
        ` · ${l.messages.length} message(s) · ${l.entries.length} entr${l.entries.length === 1 ? 'y' : 'ies'} · ${num(l.tokens)} tokens`,
      ),
    ),
    l.messages.length === 0 ? h('p', { class: 'muted' }, 'empty') : l.messages.map(messageView),
  );
  details.open = l.layer !== 'L2' || l.messages.length === 0;
  return details;
}

/** One pack as sent: layers collapsible, archived blocks highlighted, how it was built. */
export async function renderPack(
  main: HTMLElement,
  store: string,
  params: URLSearchParams,
): Promise<void> {
  const turn = Number(params.get('turn') ?? 0) || 0;
  const p = await api<PackResponse>('pack', { store, turn });
  const back = h('button', { testid: 'back-to-timeline' }, '‹ timeline');
  back.addEventListener('click', () => go('timeline', { offset: Math.floor(turn / 100) * 100 }));
  replace(
    main,
    h('div', { class: 'row' }, back, h('h1', {}, `Pack of turn ${p.turn}`)),
    h(
      'p',
      { testid: 'pack-summary' },
      `prompt at step ${p.step_id} · ${num(p.tokens)} / ${num(p.budget)} tokens (${p.tokenizer}) · baseline ${num(p.baseline_tokens)} + pages ${num(p.page_tokens)} · sha256 `,
      h('span', { class: 'mono', testid: 'pack-sha' }, p.pack_sha256),
      ' ',
      p.matches_recorded
        ? badge('ok', 'identical to the pack the session sent', 'pack-match')
        : badge('bad', 'differs from the pack the session recorded', 'pack-match'),
    ),
    p.paged_in.length === 0
      ? null
      : h(
          'ul',
          { class: 'plain', testid: 'pack-pages' },
          p.paged_in.map((x) =>
            h(
              'li',
              {},
              `paged in step ${x.step_id} · ${num(x.tokens)} tokens${x.truncated ? ' · truncated' : ''} ← matched `,
              h('b', {}, x.matched_terms.join(', ') || '(no keys)'),
            ),
          ),
        ),
    p.refused.map((f) =>
      h('p', { class: 'error' }, `refused step ${f.step_id}: ${f.error}: ${f.message}`),
    ),
    p.warnings.map((w) => h('p', { class: 'warn' }, `warning: ${w}`)),
    h('div', { class: 'layers', testid: 'pack-layers' }, p.layers.map(layerView)),
    h(
      'details',
      { class: 'meta' },
      h('summary', {}, 'metadata'),
      h('pre', { class: 'json' }, JSON.stringify(p.metadata, null, 2)),
    ),
  );
}
