import { hasLoneSurrogate } from '../extract/python-text.js';
import type { RedactionRecord } from '../protocol/types.js';
import { SecretDetector, type SecretDetectorOptions } from './detect-secrets.js';
import {
  applyRedactions,
  combinePasses,
  type RedactedText,
  type TextRedaction,
} from './redact-text.js';
import { type GuardTables, loadGuardTables } from './tables.js';
import { utf8Runs } from './utf8.js';

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

  constructor(options: RedactorOptions = {}) {
    this.#detector = new SecretDetector(options.tables ?? loadGuardTables(), options);
  }

  /**
   * Redacts a string, to a fixed point: a marker can change the context of its neighbours (a
   * key glued to a token starts a match once the token is a marker), so the output is scanned
   * again until nothing more is found. That makes redaction idempotent: redacting the output
   * again changes nothing. A string holding a lone surrogate has no UTF-8 form and cannot be
   * stored; it is returned unchanged for the caller's own validation to refuse.
   */
  async redactText(text: string): Promise<RedactedText> {
    if (text.length === 0 || hasLoneSurrogate(text)) return { text, redactions: [] };
    const first = applyRedactions(text, await this.#detector.detect(text));
    let out: RedactedText = { text: first.text, redactions: first.redactions };
    for (let pass = 1; pass < MAX_PASSES && first.redactions.length > 0; pass++) {
      const next = applyRedactions(out.text, await this.#detector.detect(out.text));
      if (next.redactions.length === 0) break;
      out = {
        text: next.text,
        redactions: combinePasses(out.redactions, next.redactions, next.edits),
      };
    }
    return out;
  }

  /**
   * Redacts bytes. Well-formed UTF-8 is redacted as text; otherwise only inside the runs that
   * are well-formed UTF-8, so every other byte passes through exactly (a secret broken by an
   * invalid byte is not recognised). Offsets are in the returned bytes.
   */
  async redactBytes(bytes: Uint8Array): Promise<RedactedBytes> {
    const runs = utf8Runs(bytes);
    if (runs.length <= 1 && (runs[0]?.valid ?? true)) {
      const r = await this.redactText(strictUtf8.decode(bytes));
      if (r.redactions.length === 0) return { bytes, redactions: [] };
      return { bytes: Buffer.from(r.text, 'utf8'), redactions: r.redactions };
    }
    const parts: Uint8Array[] = [];
    const redactions: TextRedaction[] = [];
    let at = 0;
    for (const run of runs) {
      const slice = bytes.subarray(run.start, run.end);
      let out: Uint8Array = slice;
      if (run.valid) {
        const r = await this.redactText(strictUtf8.decode(slice));
        if (r.redactions.length > 0) {
          out = Buffer.from(r.text, 'utf8');
          for (const x of r.redactions)
            redactions.push({ ...x, start: x.start + at, end: x.end + at });
        }
      }
      parts.push(out);
      at += out.length;
    }
    if (redactions.length === 0) return { bytes, redactions: [] };
    return { bytes: Buffer.concat(parts), redactions };
  }

  /**
   * Redacts every user-text field of a turn: the payload (string or bytes), the summary and the
   * explicit term lists. Returns the fields to store and the records for the cold node, field by
   * field (`raw_content`, `summary`, `files[i]`, `commands[i]`, `errors[i]`). Fields of the wrong
   * type are passed through untouched for the engine's validation to refuse.
   */
  async redactFields<T extends FoldFields>(
    input: T,
  ): Promise<{ fields: T; records: RedactionRecord[] }> {
    const records: RedactionRecord[] = [];
    const note = (field: string, rs: readonly TextRedaction[]) => {
      for (const r of rs) records.push({ field, ...r });
    };
    const fields = { ...input };
    const c = input.content;
    if (typeof c === 'string') {
      const r = await this.redactText(c);
      fields.content = r.text;
      note('raw_content', r.redactions);
    } else if (c instanceof Uint8Array) {
      const r = await this.redactBytes(c);
      fields.content = r.bytes;
      note('raw_content', r.redactions);
    }
    if (typeof input.summary === 'string') {
      const r = await this.redactText(input.summary);
      fields.summary = r.text;
      note('summary', r.redactions);
    }
    for (const key of ['files', 'commands', 'errors'] as const) {
      const list = input[key];
      if (!Array.isArray(list)) continue;
      const out: unknown[] = [];
      for (const [i, v] of list.entries()) {
        if (typeof v !== 'string') {
          out.push(v);
          continue;
        }
        const r = await this.redactText(v);
        out.push(r.text);
        note(`${key}[${i}]`, r.redactions);
      }
      fields[key] = out as string[];
    }
    return { fields, records };
  }
}

let shared: Redactor | null = null;

/** The redactor over the shipped tables, created once per process (engines share it). */
export function defaultRedactor(): Redactor {
  shared ??= new Redactor();
  return shared;
}
