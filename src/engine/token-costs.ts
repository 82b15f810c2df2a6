// What a payload costs under the engine's tokenizer, and the chunks it is served in: counted
// once and cached, because a fold, a ranked page-in and a hydrate all ask again for the same
// payloads, and counting a large payload is the slow part of a read.
import { countUpTo, derivedTokenizer, type Tokenizer } from '../extract/tokenizer.js';
import type { IndexEntry } from '../protocol/types.js';
import { NodeNotLoadedError } from '../store/index-backend.js';
import { chunkText } from './chunk.js';
import type { EngineStore } from './open-store.js';
import { payloadText } from './payload-text.js';

/** Token counts kept in memory per engine (a cache of the store's). */
const TOKEN_CACHE = 4096;

/**
 * One engine's token counts and chunks by payload hash: memory caches in front of the counts
 * the store keeps per tokenizer.
 */
export class TokenCosts {
  private readonly tokenizer: Tokenizer;
  private readonly store: EngineStore;
  private readonly tokenCache = new Map<string, number>();
  private readonly chunkCache = new Map<string, string[]>();

  constructor(tokenizer: Tokenizer, store: EngineStore) {
    this.tokenizer = tokenizer;
    this.store = store;
  }

  /** Keeps a payload's count (from a fold or a count made here) for the next read. */
  rememberTokens(payloadSha256: string, count: number): void {
    if (this.tokenCache.size >= TOKEN_CACHE) this.tokenCache.clear();
    this.tokenCache.set(payloadSha256, count);
  }

  /** Tokens of a payload known without counting (the reference estimate, or stored). */
  knownTokens(entry: Pick<IndexEntry, 'payload_sha256' | 'token_estimate'>): number | undefined {
    if (this.tokenizer.name === 'reference') return entry.token_estimate;
    const cached = this.tokenCache.get(entry.payload_sha256);
    if (cached !== undefined) return cached;
    const stored = this.store.tokens(entry.payload_sha256, this.tokenizer.name);
    if (stored !== undefined) this.rememberTokens(entry.payload_sha256, stored);
    return stored;
  }

  /** Tokens of a node's whole payload under this engine's tokenizer (stored, else counted). */
  tokensOf(stepId: number): number {
    const entry = this.store.get(stepId)!;
    const known = this.knownTokens(entry);
    if (known !== undefined) return known;
    try {
      const n = this.tokenizer.count(payloadText(this.store.verifyNode(entry)));
      this.rememberTokens(entry.payload_sha256, n);
      this.store.putTokens([
        { payload_sha256: entry.payload_sha256, tokenizer: this.tokenizer.name, count: n },
      ]);
      return n;
    } catch (e) {
      if (e instanceof NodeNotLoadedError) throw e;
      // Unverifiable: cost it at the cap; pageIn will refuse it and report why.
      return Number.MAX_SAFE_INTEGER;
    }
  }

  /** A counter that knows the whole payload's stored count (no vocabulary load for it). */
  counter(entry: IndexEntry, text: string): Tokenizer {
    const known = this.knownTokens(entry);
    const tok = this.tokenizer;
    if (known === undefined) return tok;
    return derivedTokenizer(
      tok,
      (s) => (s === text ? known : tok.count(s)),
      (s, limit) => (s === text ? known : countUpTo(tok, s, limit)),
    );
  }

  /** A payload's chunks under a cap, as hydrate serves them (cut once per payload and cap). */
  chunksOf(entry: IndexEntry, text: string, cap: number): string[] {
    const key = `${entry.payload_sha256}:${cap}`;
    let chunks = this.chunkCache.get(key);
    if (!chunks) {
      chunks = chunkText(text, cap, this.counter(entry, text));
      if (this.chunkCache.size > 512) this.chunkCache.clear();
      this.chunkCache.set(key, chunks);
    }
    return chunks;
  }
}
