import { hash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import {
  NODE_ANALYSIS_VERSION,
  type NodeAnalysis,
  parseNodeAnalysis,
} from '../retrieval/node-analysis.js';

/**
 * Revision of the ranked analysis: `NODE_ANALYSIS_VERSION` (`analyzeNode` and everything it
 * calls). It is part of every cache key, so entries of another analysis version are simply never
 * looked up again.
 *
 * @example
 * rankedCacheKey({ tokenizer: 'o200k', payloadSha256, summary }); // covers RANKED_ANALYSIS_REVISION
 */
export const RANKED_ANALYSIS_REVISION = NODE_ANALYSIS_VERSION;

/**
 * The cache directory used when `OpenOptions.cacheDir` is not given: `$CONTEXTFOLD_CACHE_DIR`,
 * else `$XDG_CACHE_HOME/contextfold` (only if absolute, per the XDG spec), else
 * `~/.cache/contextfold`. Never inside a store: the store keeps the exact reference layout.
 *
 * @example
 * defaultCacheDir({ XDG_CACHE_HOME: '/var/cache/me' }); // '/var/cache/me/contextfold'
 */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.CONTEXTFOLD_CACHE_DIR) return resolve(env.CONTEXTFOLD_CACHE_DIR);
  const xdg = env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'contextfold');
  return join(homedir(), '.cache', 'contextfold');
}

// One-shot hashing: a cold open hashes two short strings per turn (its key and its checksum).
const sha256 = (s: string): string => hash('sha256', s, 'hex');

/**
 * The content address of one turn's analysis. A cold node is immutable and named by its payload
 * hash, so an entry under this key can never go stale; the tokenizer name is part of it because
 * the analysis carries the payload's token count (so a custom tokenizer needs a name of its own).
 *
 * @example
 * rankedCacheKey({ tokenizer: 'reference', payloadSha256: 'ab…', summary: 'tool: psql' }); // 64 hex
 */
export function rankedCacheKey(input: {
  tokenizer: string;
  payloadSha256: string;
  summary: string;
}): string {
  return sha256(
    `ranked-analysis-v1\0r${RANKED_ANALYSIS_REVISION}\0${input.tokenizer}\0${input.payloadSha256}\0${input.summary}`,
  );
}

/**
 * The cache file of one store: `<cacheDir>/ranked-v1-<16 hex of sha256(realpath(storeDir))>.jsonl`.
 *
 * @example
 * rankedCacheFile({ cacheDir: '/tmp/c', storeDir: '/repo/.contextfold' }); // '/tmp/c/ranked-v1-….jsonl'
 */
export function rankedCacheFile(options: { cacheDir: string; storeDir: string }): string {
  let dir = resolve(options.storeDir);
  try {
    dir = realpathSync(dir);
  } catch {
    // Not created yet: the resolved path names it.
  }
  return join(options.cacheDir, `ranked-v1-${sha256(dir).slice(0, 16)}.jsonl`);
}

// One line: {"k":"<64 hex key>","c":"<16 hex checksum>","a":<analysis JSON>}
const HEAD = '{"k":"';
const KEY_END = HEAD.length + 64;
const MID = '","c":"';
const SUM_END = KEY_END + MID.length + 16;
const TAIL = '","a":';
const BODY = SUM_END + TAIL.length;
const HEX64 = /^[0-9a-f]{64}$/;

const checksum = (key: string, body: string): string => sha256(`${key}\n${body}`).slice(0, 16);

/**
 * Encodes one cache entry as a line (without the newline), or `undefined` for a malformed key.
 * Deterministic: the same analysis always gives the same bytes (its fields in a fixed order, no
 * clock, no Map or Set order).
 *
 * @example
 * encodeCacheLine(key, analysis); // '{"k":"…","c":"…","a":{"version":2,"keys":["5433","port"],…}}'
 */
export function encodeCacheLine(key: string, analysis: NodeAnalysis): string | undefined {
  if (!HEX64.test(key)) return undefined;
  const body = JSON.stringify(analysis);
  return `${HEAD}${key}${MID}${checksum(key, body)}${TAIL}${body}}`;
}

/** The key of a well-framed line, without checking its body (cheap, for indexing a file). */
function lineKey(line: string): string | undefined {
  if (line.length <= BODY + 1 || !line.startsWith(HEAD) || !line.endsWith('}')) return undefined;
  if (!line.startsWith(MID, KEY_END) || !line.startsWith(TAIL, SUM_END)) return undefined;
  const key = line.slice(HEAD.length, KEY_END);
  return HEX64.test(key) ? key : undefined;
}

/**
 * Decodes a cache line, or `undefined` if it is torn, corrupt or foreign in any way: a wrong
 * frame, a checksum mismatch, invalid JSON, or an analysis that breaks an invariant of the
 * index (unsorted or repeated keys, counts that do not sum to the length, …).
 *
 * @example
 * decodeCacheLine(encodeCacheLine(key, a)); // { key, analysis: a }
 * decodeCacheLine('{"k":"oops'); // undefined
 */
export function decodeCacheLine(line: string): { key: string; analysis: NodeAnalysis } | undefined {
  const key = lineKey(line);
  if (key === undefined) return undefined;
  const body = line.slice(BODY, -1);
  if (line.slice(KEY_END + MID.length, SUM_END) !== checksum(key, body)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const analysis = parseNodeAnalysis(parsed);
  return analysis ? { key, analysis } : undefined;
}

/**
 * The persistent, content-addressed cache of ranked analyses of one store: an append-only JSONL
 * file outside the store. It is never trusted for content: pages are always read and verified
 * at page-in, so an entry can only influence ranking; a line that does not decode is ignored and
 * that turn is analysed again from its verified node. Every file operation is best-effort: a
 * missing, unreadable or read-only cache never fails a scan.
 *
 * @example
 * const cache = new RankedCache({ cacheDir: defaultCacheDir(), storeDir: '/repo/.contextfold' });
 * const hits = cache.read(new Set([key]));
 * cache.queue(otherKey, analysis);
 * cache.flush(); // one append
 */
export class RankedCache {
  readonly #cacheDir: string;
  readonly #storeDir: string;
  #file: string | undefined;
  #queued: string[] = [];
  readonly #queuedKeys = new Set<string>();
  /** The file ended without a newline (a torn append): start the next append on a new line. */
  #torn = false;

  constructor(options: { cacheDir: string; storeDir: string }) {
    this.#cacheDir = options.cacheDir;
    this.#storeDir = options.storeDir;
  }

  /** The cache file (resolved on first use, when the store directory exists). */
  get file(): string {
    this.#file ??= rankedCacheFile({ cacheDir: this.#cacheDir, storeDir: this.#storeDir });
    return this.#file;
  }

  /**
   * Reads the file once and decodes the entries of `wanted` (only those: other lines are
   * framed, never parsed). When a key occurs more than once the last line that decodes wins.
   */
  read(wanted: ReadonlySet<string>): Map<string, NodeAnalysis> {
    const out = new Map<string, NodeAnalysis>();
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return out;
    }
    this.#torn = text.length > 0 && !text.endsWith('\n');
    const lines = new Map<string, string[]>();
    for (const line of text.split('\n')) {
      // Only the wanted lines are framed and checked (in decodeCacheLine); the rest are skipped.
      const key = line.slice(HEAD.length, KEY_END);
      if (!wanted.has(key)) continue;
      const list = lines.get(key);
      if (list) list.push(line);
      else lines.set(key, [line]);
    }
    for (const [key, list] of lines) {
      for (let i = list.length - 1; i >= 0; i--) {
        const d = decodeCacheLine(list[i]!);
        if (d?.key === key) {
          out.set(key, d.analysis);
          break;
        }
      }
    }
    return out;
  }

  /** Queues an entry for the next {@link flush}. */
  queue(key: string, analysis: NodeAnalysis): void {
    if (this.#queuedKeys.has(key)) return;
    const line = encodeCacheLine(key, analysis);
    if (line === undefined) return;
    this.#queuedKeys.add(key);
    this.#queued.push(line);
  }

  /** Appends the queued entries with one write (best-effort: errors are swallowed). */
  flush(): void {
    if (this.#queued.length === 0) return;
    const data = `${this.#torn ? '\n' : ''}${this.#queued.join('\n')}\n`;
    this.#queued = [];
    this.#queuedKeys.clear();
    try {
      // Private: the retrieval keys are words of the archived turns.
      mkdirSync(this.#cacheDir, { recursive: true, mode: 0o700 });
      appendFileSync(this.file, data, { mode: 0o600 });
      this.#torn = false;
    } catch {
      // A cache that cannot be written only costs the next cold open some time.
    }
  }
}
