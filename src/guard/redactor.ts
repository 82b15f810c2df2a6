import { hasLoneSurrogate } from '../extract/python-text.js';
import { compareCodePoints } from '../protocol/canonical-json.js';
import type { RedactionRecord } from '../protocol/types.js';
import { SecretDetector, type SecretDetectorOptions, type SecretHit } from './detect-secrets.js';
import {
  applyRedactions,
  combinePasses,
  type RedactedText,
  type TextRedaction,
} from './redact-text.js';
import { type CompiledPattern, type GuardTables, loadGuardTables } from './tables.js';
import { utf8Runs } from './utf8.js';
import { decodeUtf16, encodeUtf16, type Utf16Order, utf16Offsets } from './utf16.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** Every pass only turns text into markers, so this bound is never reached in practice. */
const MAX_PASSES = 8;

/** Bytes after redaction; offsets are in the returned bytes. */
export interface RedactedBytes {
  bytes: Uint8Array;
  redactions: TextRedaction[];
}

/** The user-text fields of one turn to fold (structurally the engine's fold input). */
export interface FoldFields {
  summary: string;
  content?: string | Uint8Array;
  files?: string[];
  commands?: string[];
  errors?: string[];
}

/** Options of {@link Redactor}. */
export interface RedactorOptions extends SecretDetectorOptions {
  /** Tables to use. Default: the ones shipped in `guard/`. */
  tables?: GuardTables;
}

/**
 * Removes secrets from text before anything is written: every match of the secrets table
 * becomes `[REDACTED:<descriptor>]`, and each removal is reported with its pattern, its byte
 * offsets in the output and the SHA-256 of what was removed (never the value). Same input,
 * same output; redacting an output again changes nothing.
 *
 * @example
 * const r = new Redactor();
 * const { text } = await r.redactText(`export GITHUB_TOKEN=${token}`);
 * // 'export GITHUB_TOKEN=[REDACTED:github-token]'
 */
export class Redactor {
  readonly #detector: SecretDetector;
  /** The `repeated-value` pattern of the table, if it publishes one. */
  readonly #repeated: CompiledPattern | null;

  constructor(options: RedactorOptions = {}) {
    const tables = options.tables ?? loadGuardTables();
    this.#detector = new SecretDetector(tables, options);
    this.#repeated = tables.patterns.find((p) => p.matcher.kind === 'repeated-value') ?? null;
  }

  /**
   * One text to a fixed point: a marker can change the context of its neighbours (a key glued
   * to a token starts a match once the token is a marker), so the output is scanned again until
   * nothing more is found. Removed values are added to `removed`.
   */
  async #fixpoint(start: RedactedText, removed: Set<string>): Promise<RedactedText> {
    let out = start;
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const next = applyRedactions(out.text, await this.#detector.detect(out.text));
      if (next.redactions.length === 0) break;
      for (const v of next.removed) removed.add(v);
      out = {
        text: next.text,
        redactions: combinePasses(out.redactions, next.redactions, next.edits),
      };
    }
    return out;
  }

  /** Every occurrence in `text` of a value removed elsewhere (longest values first). */
  #repeatedHits(text: string, values: readonly string[]): SecretHit[] {
    const pattern = this.#repeated!;
    const hits: SecretHit[] = [];
    for (const v of values) {
      for (let at = text.indexOf(v); at >= 0; at = text.indexOf(v, at + v.length)) {
        hits.push({ start: at, end: at + v.length, pattern });
      }
    }
    return hits.sort((a, b) => a.start - b.start || b.end - a.end);
  }

  /**
   * Redacts texts that belong together (the fields of one fold, the messages of one append):
   * each to a fixed point, then every further occurrence, in any of them, of a value removed
   * from one of them (a password from a URL echoed bare in the tool's output) becomes
   * `[REDACTED:repeated-value]`. Same texts in, same texts out; redacting the output again
   * changes nothing. A string holding a lone surrogate has no UTF-8 form and cannot be stored:
   * it is returned unchanged for the caller's own validation to refuse.
   *
   * @example
   * const [a, b] = await new Redactor().redactTexts([`psql ${url}`, 'password was s3cr3t-Pa55']);
   */
  async redactTexts(texts: readonly string[]): Promise<RedactedText[]> {
    const removed = new Set<string>();
    const out: RedactedText[] = [];
    for (const t of texts) {
      const skip = t.length === 0 || hasLoneSurrogate(t);
      const plain = { text: t, redactions: [] };
      out.push(skip ? plain : await this.#fixpoint(plain, removed));
    }
    const min =
      this.#repeated?.matcher.kind === 'repeated-value' ? this.#repeated.matcher.min_length : 0;
    const values = [...removed]
      .filter((v) => v.length >= min && /[^\p{L}]/u.test(v))
      .sort((a, b) => b.length - a.length || compareCodePoints(a, b));
    if (!this.#repeated || values.length === 0) return out;
    for (const [i, r] of out.entries()) {
      if (r.text.length === 0 || hasLoneSurrogate(r.text)) continue;
      const hits = this.#repeatedHits(r.text, values);
      if (hits.length === 0) continue;
      const echo = applyRedactions(r.text, hits);
      if (echo.redactions.length === 0) continue;
      const merged = {
        text: echo.text,
        redactions: combinePasses(r.redactions, echo.redactions, echo.edits),
      };
      // A new marker can again change its neighbours' context: settle this text once more.
      out[i] = await this.#fixpoint(merged, new Set());
    }
    return out;
  }

  /** Redacts one string (see {@link redactTexts}). */
  async redactText(text: string): Promise<RedactedText> {
    return (await this.redactTexts([text]))[0]!;
  }

  /**
   * Redacts bytes. Well-formed UTF-8 is redacted as text; so is UTF-16 with a byte-order mark
   * (FF FE, as PowerShell writes, or FE FF), re-encoded in the same byte order with its BOM;
   * otherwise only inside the runs that are well-formed UTF-8, so every other byte passes
   * through exactly (a secret broken by an invalid byte is not recognised). Bytes with nothing
   * found are returned as they are. Offsets are in the returned bytes.
   */
  async redactBytes(bytes: Uint8Array): Promise<RedactedBytes> {
    return (await this.#redactPieces([{ bytes }]))[0] as RedactedBytes;
  }

  /**
   * Redacts pieces of one fold or batch jointly: strings as text, bytes as UTF-16 text when
   * they carry its byte-order mark, else in their well-formed UTF-8 runs. One
   * {@link redactTexts} call over every text of every piece.
   */
  async #redactPieces(
    pieces: readonly ({ text: string } | { bytes: Uint8Array })[],
  ): Promise<(RedactedText | RedactedBytes)[]> {
    const texts: string[] = [];
    const plans = pieces.map((p) => {
      if ('text' in p) {
        texts.push(p.text);
        return { kind: 'text' as const, at: texts.length - 1 };
      }
      const utf16 = decodeUtf16(p.bytes);
      if (utf16) {
        texts.push(utf16.text);
        return { kind: 'utf16' as const, bytes: p.bytes, at: texts.length - 1, order: utf16.order };
      }
      const runs = utf8Runs(p.bytes).map((r) => {
        if (!r.valid) return { ...r, at: -1 };
        texts.push(strictUtf8.decode(p.bytes.subarray(r.start, r.end)));
        return { ...r, at: texts.length - 1 };
      });
      return { kind: 'bytes' as const, bytes: p.bytes, runs };
    });
    const done = await this.redactTexts(texts);
    return plans.map((plan) => {
      if (plan.kind === 'text') return done[plan.at]!;
      if (plan.kind === 'utf16') {
        const d = done[plan.at]!;
        if (d.redactions.length === 0) return { bytes: plan.bytes, redactions: [] };
        return utf16Result(d, plan.order);
      }
      const parts: Uint8Array[] = [];
      const redactions: TextRedaction[] = [];
      let offset = 0;
      for (const r of plan.runs) {
        const d = r.at >= 0 ? done[r.at]! : null;
        const out =
          d && d.redactions.length > 0
            ? Buffer.from(d.text, 'utf8')
            : plan.bytes.subarray(r.start, r.end);
        for (const x of d?.redactions ?? []) {
          redactions.push({ ...x, start: x.start + offset, end: x.end + offset });
        }
        parts.push(out);
        offset += out.length;
      }
      if (redactions.length === 0) return { bytes: plan.bytes, redactions: [] };
      return { bytes: Buffer.concat(parts), redactions };
    });
  }

  /**
   * Redacts every user-text field of a turn jointly: the payload (string or bytes), the summary
   * and the explicit term lists. Returns the fields to store and the records for the cold node,
   * field by field (`raw_content`, `summary`, `files[i]`, `commands[i]`, `errors[i]`). Fields of
   * the wrong type are passed through untouched for the engine's validation to refuse.
   */
  async redactFields<T extends FoldFields>(
    input: T,
  ): Promise<{ fields: T; records: RedactionRecord[] }> {
    const pieces: ({ text: string } | { bytes: Uint8Array })[] = [];
    const slots: { field: string; set: (v: string | Uint8Array) => void }[] = [];
    const fields = { ...input };
    const c = input.content;
    if (typeof c === 'string' || c instanceof Uint8Array) {
      pieces.push(typeof c === 'string' ? { text: c } : { bytes: c });
      slots.push({ field: 'raw_content', set: (v) => (fields.content = v) });
    }
    if (typeof input.summary === 'string') {
      pieces.push({ text: input.summary });
      slots.push({ field: 'summary', set: (v) => (fields.summary = v as string) });
    }
    for (const key of ['files', 'commands', 'errors'] as const) {
      const list = input[key];
      if (!Array.isArray(list)) continue;
      const copy = [...list];
      fields[key] = copy;
      copy.forEach((v, i) => {
        if (typeof v !== 'string') return;
        pieces.push({ text: v });
        slots.push({ field: `${key}[${i}]`, set: (x) => (copy[i] = x as string) });
      });
    }
    const done = await this.#redactPieces(pieces);
    const records: RedactionRecord[] = [];
    done.forEach((d, i) => {
      if (d.redactions.length === 0) return;
      slots[i]!.set('text' in d ? d.text : d.bytes);
      for (const r of d.redactions) records.push({ field: slots[i]!.field, ...r });
    });
    return { fields, records };
  }
}

/** A UTF-16 payload's redacted text as bytes in its byte order, offsets in those bytes. */
function utf16Result(d: RedactedText, order: Utf16Order): RedactedBytes {
  // Records are sorted and disjoint, so their edges ascend.
  const at = utf16Offsets(
    d.text,
    d.redactions.flatMap((r) => [r.start, r.end]),
  );
  return {
    bytes: encodeUtf16(d.text, order),
    redactions: d.redactions.map((r, i) => ({ ...r, start: at[2 * i]!, end: at[2 * i + 1]! })),
  };
}

let shared: Redactor | null = null;

/**
 * The redactor over the shipped tables, created once per process (engines share it).
 *
 * @example
 * (await defaultRedactor().redactText(`token ${githubToken} here`)).text; // 'token [REDACTED:github-token] here'
 */
export function defaultRedactor(): Redactor {
  shared ??= new Redactor();
  return shared;
}
