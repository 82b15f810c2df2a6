// The only way the client builds DOM: elements with text children (never HTML strings), so
// archived content, however hostile, is always shown as text.

import { textPieces } from '../invisible-chars.js';

/** A child: text (shown as text), a node, or nothing. Arrays are flattened. */
export type Child = Node | string | number | null | undefined | false | Child[];

/** Element properties the client may set. No inline handlers, styles or URLs from data. */
export interface Props {
  class?: string;
  testid?: string;
  title?: string;
  /** In-app links only (`#/…`). */
  href?: string;
  attrs?: Record<string, string>;
  on?: Partial<Record<keyof HTMLElementEventMap, (e: Event) => void>>;
  /**
   * What a click on the element (a row, a block) does; the element is also reached with Tab and
   * run with Enter or Space, so everything that opens something works from the keyboard.
   */
  activate?: () => void;
}

const FORBIDDEN_ATTR = /^(on|style$|src$|href$|srcdoc$|action$|formaction$)/i;

function append(el: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const c of child) append(el, c);
  } else if (typeof child === 'string' || typeof child === 'number') {
    el.appendChild(document.createTextNode(String(child)));
  } else {
    el.appendChild(child);
  }
}

function activatable(el: HTMLElement, run: () => void): void {
  el.tabIndex = 0;
  el.addEventListener('click', () => run());
  el.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' && e.key !== ' ') return;
    e.preventDefault();
    run();
  });
}

/**
 * Creates an element. Strings become text nodes.
 *
 * @example
 * h('td', { class: 'num' }, 42);
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.class) el.className = props.class;
  if (props.testid) el.dataset.testid = props.testid;
  if (props.title) el.title = props.title;
  if (props.href !== undefined) {
    if (!props.href.startsWith('#')) throw new Error(`only in-app links: ${props.href}`);
    el.setAttribute('href', props.href);
  }
  for (const [k, v] of Object.entries(props.attrs ?? {})) {
    if (FORBIDDEN_ATTR.test(k)) throw new Error(`attribute not allowed: ${k}`);
    el.setAttribute(k, v);
  }
  for (const [k, fn] of Object.entries(props.on ?? {})) if (fn) el.addEventListener(k, fn);
  if (props.activate) activatable(el, props.activate);
  append(el, children);
  return el;
}

/**
 * A table: one header row of `head`, then `rows` as its body.
 *
 * @example
 * table({ class: 'grid', testid: 'problems' }, ['kind', 'step'], rows);
 */
export function table(props: Props, head: readonly string[], rows: Child): HTMLTableElement {
  const header = h(
    'tr',
    {},
    head.map((t) => h('th', {}, t)),
  );
  return h('table', props, h('thead', {}, header), h('tbody', {}, rows));
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/**
 * Archived text (a summary, a term, a pack's body) as children: text, with each invisible or
 * reordering character (zero-width, bidi override) shown by code point, as in a payload, so
 * archived text cannot hide or reorder what is on screen.
 *
 * @example
 * h('td', {}, archivedText('rtl \u202eevil')); // rtl ⟨U+202E⟩evil
 */
export function archivedText(text: string): (string | HTMLElement)[] {
  return Array.from(textPieces(text), (p) =>
    p.kind === 'text'
      ? p.text
      : h(
          'span',
          { class: 'invisible', title: 'an invisible or reordering character' },
          `⟨${p.code}⟩`,
        ),
  );
}

/** A number with thousands separators. */
export function num(n: number): string {
  return n.toLocaleString('en-US');
}

/** Bytes in human units. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** A status badge. */
export function badge(kind: 'ok' | 'bad' | 'warn' | 'info', text: string, testid?: string) {
  return h('span', { class: `badge ${kind}`, ...(testid ? { testid } : {}) }, text);
}
