import type { HashView, NodeResponse, PayloadResponse, PayloadSegment } from '../api-types.js';
import { api } from './api.js';
import { archivedText, badge, bytes, type Child, h, num, replace, table } from './dom.js';
import { patch } from './route.js';

let shown = '';

function drawerEl(): HTMLElement {
  return document.getElementById('drawer')!;
}

/** Hides the node drawer. */
export function closeDrawer(): void {
  shown = '';
  const d = drawerEl();
  d.hidden = true;
  d.replaceChildren();
}

/** One kind of term: the first ones the server sent, and how many there are in all. */
function terms(label: string, list: string[], total: number, testid: string): HTMLElement | null {
  if (total === 0) return null;
  return h(
    'div',
    { class: 'terms', testid },
    h('h4', {}, `${label} (${num(total)})`),
    list.map((t) => h('span', { class: 'chip term' }, archivedText(t))),
    total > list.length
      ? h('span', { class: 'muted' }, ` … ${num(total - list.length)} more`)
      : null,
  );
}

function hashTable(hashes: HashView[]): HTMLElement {
  return table(
    { class: 'grid hashes', testid: 'hashes' },
    ['hash', 'index', 'file', 'recomputed', ''],
    hashes.map((x) =>
      h(
        'tr',
        { testid: `hash-${x.name}` },
        h('td', {}, x.name),
        h('td', { class: 'mono hash', testid: 'hash-index' }, x.index),
        h('td', { class: 'mono hash' }, x.file ?? '—'),
        h('td', { class: 'mono hash' }, x.recomputed ?? '(compared, not recomputed)'),
        h('td', {}, x.ok ? badge('ok', 'ok') : badge('bad', 'mismatch')),
      ),
    ),
  );
}

function segmentView(s: PayloadSegment): Node {
  if (s.kind === 'text') return document.createTextNode(s.text);
  if (s.kind === 'hex')
    return h(
      'span',
      { class: 'hex', title: 'bytes shown as hex (invalid UTF-8 or a control byte)' },
      `⟨${s.hex}⟩`,
    );
  return h(
    'span',
    { class: 'invisible', title: 'an invisible or reordering character' },
    `⟨${s.code}⟩`,
  );
}

function payloadView(p: PayloadResponse): HTMLElement {
  const rows = p.lines.map((line, i) =>
    h(
      'tr',
      {},
      h('td', { class: 'ln' }, i + 1),
      h('td', { class: 'code' }, h('pre', {}, line.map(segmentView))),
    ),
  );
  return h(
    'div',
    { testid: 'payload' },
    h(
      'p',
      { class: 'muted', testid: 'payload-info' },
      `${bytes(p.bytes)} · ${num(p.total_lines)} line(s) · ${p.valid_utf8 ? 'valid UTF-8' : 'not valid UTF-8: invalid bytes shown as hex'}`,
      p.truncated
        ? ` · showing the first ${bytes(p.shown_bytes)} (${num(p.lines.length)} line(s))`
        : '',
    ),
    h('table', { class: 'payload' }, h('tbody', {}, rows)),
  );
}

/** The verification badge: verified, or why not (the error, its message and the file). */
function verifyBadge(n: NodeResponse): HTMLElement {
  return n.verified
    ? badge('ok', 'verified: all three hashes match (as hydrate checks them)', 'verified')
    : h(
        'div',
        {},
        badge('bad', `verification failed: ${n.problem?.error ?? ''}`, 'verified'),
        h(
          'p',
          { class: 'error', testid: 'verify-problem' },
          n.problem?.message ?? '',
          h('br'),
          h('span', { class: 'mono' }, n.problem?.path ?? ''),
        ),
      );
}

/** The node's index fields, as a definition list. */
function fieldList(n: NodeResponse): HTMLElement {
  return h(
    'dl',
    { class: 'fields' },
    [
      ['folded at', n.folded_at],
      ['tokens (estimate)', num(n.token_estimate)],
      ['evicted', n.evicted ? 'yes' : 'no'],
      [
        'sanitized',
        n.sanitized === null ? 'unknown' : n.sanitized ? 'yes (redacted before write)' : 'no',
      ],
      ['session', n.session_id ?? '—'],
      ['status', n.status ?? '—'],
      ['encoding', n.encoding ?? 'utf-8 text'],
      ['file', n.path],
    ].flatMap(([k, v]) => [
      h('dt', {}, k as string),
      h('dd', { class: k === 'file' ? 'mono' : '' }, v as string),
    ]),
  );
}

/** The node file's fields the check does not know, titled as guard findings when they look so. */
function otherFields(n: NodeResponse): HTMLElement {
  if (!n.verified) {
    return h(
      'p',
      { class: 'muted', testid: 'findings' },
      'Fields of the node file (guard findings, session, status) are not shown: it does not verify.',
    );
  }
  const extraKeys = Object.keys(n.extra);
  const findings = extraKeys.some((k) => /finding|redact|guard/i.test(k));
  return extraKeys.length === 0
    ? h(
        'p',
        { class: 'muted', testid: 'findings' },
        'No guard findings or other fields in this node.',
      )
    : h(
        'div',
        { testid: 'findings' },
        h('h3', {}, findings ? 'Guard findings and other fields' : 'Other fields'),
        h('pre', { class: 'json' }, JSON.stringify(n.extra, null, 2)),
      );
}

/** The drawer's body for a node; the payload gets a slot only if the node verifies. */
function nodeDetails(n: NodeResponse): Child[] {
  return [
    h('h3', {}, 'Summary'),
    h('p', { class: 'summary-text', testid: 'node-summary' }, archivedText(n.summary)),
    fieldList(n),
    h('h3', {}, 'Hashes'),
    hashTable(n.hashes),
    h('h3', {}, 'Terms'),
    terms('identifiers', n.identifiers, n.term_counts.identifiers, 'terms-identifiers'),
    terms('files', n.files, n.term_counts.files, 'terms-files'),
    terms('commands', n.commands, n.term_counts.commands, 'terms-commands'),
    terms('errors', n.errors, n.term_counts.errors, 'terms-errors'),
    otherFields(n),
    h('h3', {}, 'Payload'),
    n.verified
      ? h('div', { testid: 'payload-slot' }, h('p', { class: 'muted' }, 'loading…'))
      : h(
          'p',
          { class: 'error' },
          'Not shown: the node does not verify, and unverified bytes are never served.',
        ),
  ];
}

/** Fills the payload slot; a failure is shown in the slot, the rest of the drawer stays. */
async function fillPayload(slot: Element, store: string, step: number): Promise<void> {
  try {
    replace(slot, payloadView(await api<PayloadResponse>('payload', { store, step })));
  } catch (e) {
    replace(slot, h('p', { class: 'error' }, (e as Error).message));
  }
}

/** Where {@link loadNode} shows a node: the store and step, the badge and the body. */
interface NodeTarget {
  store: string;
  step: number;
  status: HTMLElement;
  body: HTMLElement;
}

/** Checks the node live (again on each re-verify) and shows it. */
async function loadNode({ store, step, status, body }: NodeTarget): Promise<void> {
  replace(status, badge('info', 'verifying…'));
  const n = await api<NodeResponse>('node', { store, step });
  replace(status, verifyBadge(n));
  replace(body, nodeDetails(n));
  if (n.verified) {
    const slot = body.querySelector('[data-testid="payload-slot"]')!;
    await fillPayload(slot, store, step);
  }
}

async function fill(d: HTMLElement, store: string, step: number): Promise<void> {
  const status = h('div', { testid: 'verify-badge' }, badge('info', 'verifying…'));
  const reverify = h('button', { testid: 'reverify' }, 're-verify');
  const close = h('button', { class: 'close', testid: 'drawer-close', title: 'close (Esc)' }, '×');
  close.addEventListener('click', () => patch({ node: null }));
  const body = h('div', { class: 'drawer-body' }, h('p', { class: 'muted' }, 'loading…'));
  replace(
    d,
    h('div', { class: 'drawer-head' }, h('h2', {}, `Node · step ${step}`), close),
    h('div', { class: 'row' }, status, reverify),
    body,
  );
  const load = (): Promise<void> => loadNode({ store, step, status, body });
  reverify.addEventListener(
    'click',
    () => void load().catch((e) => replace(status, badge('bad', (e as Error).message))),
  );
  try {
    await load();
  } catch (e) {
    replace(body, h('p', { class: 'error', testid: 'error' }, (e as Error).message));
    replace(status, badge('bad', 'cannot check'));
  }
}

/** Shows the node drawer for a step (once per store and step). */
export async function showDrawer(store: string, step: number, key: string): Promise<void> {
  if (shown === key) return;
  shown = key;
  const d = drawerEl();
  d.hidden = false;
  await fill(d, store, step);
}
