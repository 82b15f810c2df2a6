import type { Tokenizer } from '../extract/tokenizer.js';
import { sha256Hex } from '../protocol/canonical-json.js';
import type { Message } from './messages.js';
import { renderMessage } from './render.js';

/**
 * Counts tokens with the engine's tokenizer and remembers the counts of immutable objects
 * (history messages, records), so assembling a pack every turn costs O(entries), not
 * O(prompt bytes). A cache only: results never depend on what was counted before.
 *
 * @example
 * const meter = new TokenMeter(o200kTokenizer());
 * meter.message({ role: 'user', content: 'hi' }); // tokens of '[user]\nhi\n\n'
 */
export class TokenMeter {
  readonly tokenizer: Tokenizer;
  private readonly byObject = new WeakMap<object, number>();
  private readonly byText = new Map<string, number>();
  /** Counts of longer texts by their sha256 (a paged-in block recurs over many turns). */
  private readonly byHash = new Map<string, number>();

  constructor(tokenizer: Tokenizer) {
    this.tokenizer = tokenizer;
  }

  /** Tokens of a text. Memoised (bounded): short texts by themselves, longer ones by hash. */
  text(text: string): number {
    // A long text is remembered by its hash: a paged-in block is counted again for every turn
    // that pages it, and keeping the text itself as the key would hold megabytes.
    const long = text.length > 512;
    const memo = long ? this.byHash : this.byText;
    const key = long ? sha256Hex(text) : text;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    const n = this.tokenizer.count(text);
    if (memo.size >= (long ? 20_000 : 50_000)) memo.clear();
    memo.set(key, n);
    return n;
  }

  /** Tokens of a message as rendered in a prompt (header, body, blank line). */
  message(m: Message): number {
    return this.keyed(m, () => renderMessage(m));
  }

  /** Tokens of a text derived from an immutable object, memoised by that object. */
  keyed(key: object, render: () => string): number {
    const hit = this.byObject.get(key);
    if (hit !== undefined) return hit;
    const n = this.tokenizer.count(render());
    this.byObject.set(key, n);
    return n;
  }
}
