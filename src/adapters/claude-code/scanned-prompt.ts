/**
 * Characters of a prompt the hook scans at most: its head and its tail, half each. A pasted log
 * of several MB would otherwise take the scan past the 15 s timeout `contextfold install` gives
 * the prompt hook, on a loaded machine (7.4 MB: 5 s of CPU, up to 17 s wall), and a hook that
 * times out pages in nothing.
 */
export const MAX_SCANNED_PROMPT_CHARS = 2 * 1024 * 1024;

/** What {@link scannedPrompt} keeps of a prompt. */
export interface ScannedPrompt {
  /** The text to scan: the whole prompt, or its head and tail joined by a line break. */
  text: string;
  /** Null when the whole prompt is scanned; else its length and the characters scanned. */
  cut: { chars: number; scanned: number } | null;
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** `head` up to its last line break, else its last space, never ending in half a pair. */
function wholeHead(head: string): string {
  const cut = head.lastIndexOf('\n') + 1 || head.lastIndexOf(' ') + 1;
  if (cut > 0) return head.slice(0, cut);
  return isHigh(head.charCodeAt(head.length - 1)) ? head.slice(0, -1) : head;
}

/** `tail` from after its first line break, else its first space, never opening in half a pair. */
function wholeTail(tail: string): string {
  const nl = tail.indexOf('\n');
  const cut = nl >= 0 ? nl + 1 : tail.indexOf(' ') + 1;
  if (cut > 0) return tail.slice(cut);
  return isLow(tail.charCodeAt(0)) ? tail.slice(1) : tail;
}

/**
 * The part of a prompt the hook scans: all of it up to `max` characters; beyond, the first and
 * the last `max / 2` characters, each cut back to whole lines (else whole words), where a pasted
 * log's question and its last lines are. Deterministic: the same prompt, the same text.
 *
 * @example
 * scannedPrompt('What port is PostgreSQL on?'); // { text: 'What port is PostgreSQL on?', cut: null }
 */
export function scannedPrompt(prompt: string, max = MAX_SCANNED_PROMPT_CHARS): ScannedPrompt {
  if (prompt.length <= max) return { text: prompt, cut: null };
  const half = Math.floor(max / 2);
  const head = wholeHead(prompt.slice(0, half));
  const tail = wholeTail(prompt.slice(prompt.length - half));
  return {
    text: `${head}\n${tail}`,
    cut: { chars: prompt.length, scanned: head.length + tail.length },
  };
}
