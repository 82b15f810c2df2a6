import { referenceTokenizer } from '../extract/tokenizer.js';
import { renderPageContent } from '../guard/render-page.js';
import type { ArchivedBlockInfo } from '../harness/archived-block.js';
import { ELISION } from '../retrieval/ranked-focus.js';
import type { StoredNode, StoreSnapshot } from './store-snapshot.js';
import type { CallObservation } from './subject.js';

/**
 * One archived block found in a model input (the label every integration renders pages with):
 * the block's label fields as `formatArchivedBlock` writes them, chunk 0-based.
 */
export type ParsedPage = Omit<ArchivedBlockInfo, 'findings'>;

const OPEN_RE =
  /<archived_record step_id="(\d+)" payload_sha256="([0-9a-f]{64})" chunk="(\d+)\/(\d+)" truncated="(true|false)">\n[^\n]*\n/g;

/** The line the guard adds after the label when a page has a high-severity finding. */
const GUARD_WARNING = 'Warning: contextfold guard flagged ';

/**
 * The archived blocks of a model input: each opening tag (step id, payload hash, chunk,
 * truncation), its label line, the guard's warning line if there is one, and the content up to
 * its closing tag (which repeats the first 16 hex digits of the hash, so content cannot close
 * its own block early). The content is as the guard renders it (see `renderPageContent`).
 *
 * @example
 * parsePages(modelInput).map((p) => p.step_id);
 */
export function parsePages(text: string): ParsedPage[] {
  const out: ParsedPage[] = [];
  OPEN_RE.lastIndex = 0;
  for (let m = OPEN_RE.exec(text); m; m = OPEN_RE.exec(text)) {
    const close = `\n</archived_record ${m[2]!.slice(0, 16)}>`;
    let start = m.index + m[0].length;
    if (text.startsWith(GUARD_WARNING, start)) {
      const eol = text.indexOf('\n', start);
      if (eol >= 0) start = eol + 1;
    }
    const end = text.indexOf(close, start);
    if (end < 0) continue;
    out.push({
      step_id: Number(m[1]),
      payload_sha256: m[2]!,
      chunk: Number(m[3]) - 1,
      chunks: Number(m[4]),
      truncated: m[5] === 'true',
      content: text.slice(start, end),
    });
    OPEN_RE.lastIndex = end + close.length;
  }
  return out;
}

/** A node's name in results: its record, else `?` and the start of its payload hash. */
export const labelOf = (n: StoredNode | undefined, hash: string) =>
  n?.record ?? `?${hash.slice(0, 12)}`;

/** What the runner derives from one call (the named keys the expectations compare). */
export interface CallResult {
  proceeded: boolean;
  /** Records paged in, sorted; a page of no record is `?<hash>`. */
  paged: string[];
  /** Records refused and reported, with their error names. */
  refused: { record: string; error: string }[];
  /** Null when every page verifies, else why one does not. */
  unverified: string | null;
  /** Tokens of all pages of the call (reference estimator, `max(1, codepoints // 4)` each). */
  page_tokens: number;
  /** Records paged into both the previous call and this one (empty when none, or first call). */
  carried_over: string[];
  /** The model input (kept for the text checks; not part of the printed result). */
  model_input: string;
  error?: string;
}

const lossy = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

const ELISION_BYTES = Buffer.from(ELISION, 'utf8');

/**
 * Whether a page is a contiguous piece of the payload, or a contiguous piece, an elision line
 * and the payload's last lines (a window with a tail), the piece ending before the tail starts.
 */
function isPieceOf(page: Buffer, payload: Buffer): boolean {
  if (payload.includes(page)) return true;
  const cut = page.lastIndexOf(ELISION_BYTES);
  if (cut <= 0) return false;
  const head = page.subarray(0, cut);
  const tail = page.subarray(cut + ELISION_BYTES.length);
  const from = payload.length - tail.length;
  if (tail.length === 0 || from < 0 || !payload.subarray(from).equals(tail)) return false;
  const at = payload.indexOf(head);
  return at >= 0 && at + head.length < from;
}

/**
 * A page must be a contiguous piece of its verified payload as the guard renders it (wrapper
 * tags escaped, invisible characters spelled out; the stored bytes themselves are exact), or
 * such a piece followed by an elision line and the payload's last lines.
 */
function verify(p: ParsedPage, node: StoredNode | undefined): string | null {
  if (!node) return `page of step ${p.step_id} carries a payload hash no stored node has`;
  const bytes = Buffer.from(p.content, 'utf8');
  const rendered = Buffer.from(renderPageContent(lossy.decode(node.payload)), 'utf8');
  if (bytes.length === 0 || !isPieceOf(bytes, rendered))
    return `page of step ${p.step_id} is not a contiguous piece of its verified payload`;
  if (bytes.length < rendered.length && !p.truncated && p.chunks < 2)
    return `page of step ${p.step_id} is partial but says neither truncated nor chunked`;
  return null;
}

/**
 * Derives a call's result from what the integration produced: pages are recognised by the
 * payload hash on their label and checked against the verified bytes read after setup (a page
 * of a tampered or foreign node is caught by its content, whatever its label claims);
 * refusals are named by the record their step holds in the call's session.
 *
 * @example
 * const result = deriveCall(await sc.call('main', 'What was zephyr_ledger_7781?'), 'main', snapshot, null);
 * result.refused; // [{ record: 'alpha', error: 'IntegrityCheckError' }]: its payload was edited
 */
export function deriveCall(
  obs: CallObservation,
  session: string,
  snapshot: StoreSnapshot,
  previous: CallResult | null,
): CallResult {
  const pages = obs.proceeded ? parsePages(obs.modelInput) : [];
  let unverified: string | null = null;
  const paged = new Set<string>();
  let tokens = 0;
  for (const p of pages) {
    const node = snapshot.byHash(p.payload_sha256);
    paged.add(labelOf(node, p.payload_sha256));
    unverified ??= verify(p, node);
    tokens += referenceTokenizer.count(p.content);
  }
  const list = [...paged].sort();
  const refused = obs.refused.map((r) => {
    const n = snapshot.byStep(session, r.step_id);
    return { record: n?.record ?? `#${r.step_id}`, error: r.error };
  });
  return {
    proceeded: obs.proceeded,
    paged: list,
    refused,
    unverified,
    page_tokens: tokens,
    carried_over: previous ? list.filter((x) => previous.paged.includes(x)) : [],
    model_input: obs.modelInput,
    ...(obs.error ? { error: obs.error } : {}),
  };
}
