// Where an analysis reads a payload: its blocks of whole lines, and for a payload over the read
// budget, the blocks of its head and of its tail.

/** A block is a run of whole lines of at most this many characters (a longer line is its own block). */
export const BLOCK_CHARS = 1000;

/**
 * The most characters (UTF-16 code units) of a payload an analysis reads: a longer payload (a
 * pasted build log, a huge tool output) is analysed by its head and its tail, about half of this
 * each (see {@link readSpans}). An analysis costs time and memory in proportion to what it reads
 * (0.1–0.6 s and tens of MB a MB of log), and a fold, a hook or an MCP server must not be killed
 * by one turn; the turn itself is stored whole. Above the largest turn of the eval data (1.4 M
 * characters), so every turn of it is analysed whole.
 */
export const ANALYSIS_CHARS = 2 * 1024 * 1024;

/** A block of the payload: lines `[start, end)`, characters `[from, to)`. */
export interface BlockSpan {
  start: number;
  end: number;
  from: number;
  to: number;
}

/**
 * The payload's blocks (runs of whole lines, see {@link BLOCK_CHARS}) and where its first line
 * ends, found with `indexOf` rather than by splitting the text into line strings.
 */
export function blockSpans(text: string): { spans: BlockSpan[]; firstLineEnd: number } {
  const spans: BlockSpan[] = [];
  let cur: BlockSpan | undefined;
  let line = 0;
  let pos = 0;
  let firstLineEnd = -1;
  do {
    const nl = text.indexOf('\n', pos);
    const next = nl === -1 ? text.length : nl + 1;
    if (firstLineEnd < 0) firstLineEnd = next;
    if (!cur || (cur.to > cur.from && cur.to - cur.from + (next - pos) > BLOCK_CHARS)) {
      cur = { start: line, end: line, from: pos, to: pos };
      spans.push(cur);
    }
    cur.to = next;
    cur.end = ++line;
    pos = next;
  } while (pos < text.length);
  return { spans, firstLineEnd };
}

/**
 * The blocks an analysis reads and how many characters they hold: every block of a payload
 * within `budget`, else the head's blocks up to half the budget, then the tail's up to what is
 * left. Each keeps its lines' numbers in the whole payload, so a page window still points at
 * them. A block longer than its side's budget (one huge line) is read up to that budget, cut
 * after a white space when one is near (a key is not cut in two).
 */
export interface PayloadRead {
  spans: BlockSpan[];
  /** Characters read: the payload's length when `spans` are all its blocks. */
  analysed: number;
}

/** The spans of `text` (its {@link blockSpans}) an analysis reads within `budget` characters. */
export function readSpans(text: string, spans: BlockSpan[], budget: number): PayloadRead {
  if (text.length <= budget) return { spans, analysed: text.length };
  // At least a character of the head, so the first line's keys are read (the header's).
  const half = Math.max(1, Math.floor(budget / 2));
  const head = takeSpans(text, spans, { from: 0, step: 1, stop: spans.length }, half);
  const tailWay = { from: spans.length - 1, step: -1 as const, stop: head.next - 1 };
  const tail = takeSpans(text, spans, tailWay, budget - head.chars);
  return { spans: head.taken.concat(tail.taken.reverse()), analysed: head.chars + tail.chars };
}

/** Which spans {@link takeSpans} walks: from `from` by `step`, up to `stop` excluded. */
interface Walk {
  from: number;
  step: 1 | -1;
  stop: number;
}

/**
 * Spans along `walk` while their characters fit `room`; a first span longer than `room` is cut
 * to fit. `next` is the first span not taken.
 */
function takeSpans(text: string, spans: readonly BlockSpan[], walk: Walk, room: number) {
  const taken: BlockSpan[] = [];
  let chars = 0;
  let i = walk.from;
  for (; i !== walk.stop; i += walk.step) {
    const s = spans[i]!;
    if (chars + s.to - s.from <= room) {
      taken.push(s);
      chars += s.to - s.from;
      continue;
    }
    if (taken.length === 0 && room >= 1) {
      taken.push({ ...s, to: cutAt(text, s.from, s.from + Math.floor(room)) });
      chars += taken[0]!.to - s.from;
      i += walk.step;
    }
    break;
  }
  return { taken, chars, next: i };
}

/** Just after the last space or tab of the `BLOCK_CHARS` before `end`, else `end` itself. */
function cutAt(text: string, from: number, end: number): number {
  for (let i = end - 1; i > from && i >= end - BLOCK_CHARS; i--) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9) return i + 1;
  }
  return end;
}
