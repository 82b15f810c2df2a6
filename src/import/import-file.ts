import type { ContextFoldEngine } from '../engine/types.js';
import { UsageError } from '../protocol/errors.js';
import { checkOptionKeys } from '../protocol/option-keys.js';
import { detectImportFormat } from './detect-format.js';
import { type ImportTurnsResult, importTurns } from './import-turns.js';
import { parseHistory } from './parse-history.js';
import { readSourceText, sourceName } from './read-source.js';
import type { ImportedTurn, ImportFormat } from './turn.js';

/** A file read and parsed, ready to fold. */
export interface LoadedHistory {
  file: string;
  format: ImportFormat;
  /** True when `format` was told from the content (no format given). */
  detected: boolean;
  turns: ImportedTurn[];
  /** The session id the file records (Claude Code transcripts), else null. */
  sessionId: string | null;
  /** Steps of a transcript's last turns still open, left out (see `ParsedTranscript.open`). */
  open: number[];
  /** Records of a type the reader does not know, by type: left out (see `ParsedHistory`). */
  skipped: Record<string, number>;
}

/**
 * Reads (gunzipping `.gz`) and parses a history file (standard input for `-`) completely; throws a one-line error naming
 * the line of the first malformed record. Nothing is written. Without `format`, the format is
 * told from the content ({@link detectImportFormat}), or the error asks for one.
 *
 * @example
 * const h = loadHistoryFile({ file: 'session.jsonl.gz', format: 'claude-code' });
 */
export function loadHistoryFile(options: { file: string; format?: ImportFormat }): LoadedHistory {
  checkOptionKeys('loadHistoryFile', options ?? {}, { file: true, format: true });
  if (typeof options?.file !== 'string' || options.file === '') {
    throw new UsageError(
      `import needs { file }: the path of a history file (got ${String(options?.file)})`,
    );
  }
  const text = readSourceText(options.file);
  const source = sourceName(options.file);
  const format = options.format ?? detectImportFormat({ text, source });
  const parsed = parseHistory({ text, format, source });
  if (parsed.turns.length === 0 && (parsed.open ?? []).length === 0) {
    // A file of another format reads as no records of this one: say so rather than import
    // nothing and succeed.
    const hint = options.format === undefined ? '' : ' (another format? try without --format)';
    throw new UsageError(`${source} has no ${format} messages: nothing to import${hint}`, {
      path: options.file,
    });
  }
  return {
    file: options.file,
    format,
    detected: options.format === undefined,
    turns: parsed.turns,
    sessionId: parsed.sessionId,
    open: parsed.open ?? [],
    skipped: parsed.skipped ?? {},
  };
}

/**
 * Imports a history file into an open store: parse everything first, then fold in one batch.
 *
 * @example
 * const engine = await ContextFold.open({ dir: '.contextfold' });
 * const r = await importFile(engine, { file: 'chat.json', format: 'openai' });
 */
export async function importFile(
  engine: ContextFoldEngine,
  options: {
    file: string;
    format?: ImportFormat;
    onProgress?: (done: number, total: number) => void;
  },
): Promise<ImportTurnsResult & { history: LoadedHistory }> {
  checkOptionKeys('importFile', options ?? {}, { file: true, format: true, onProgress: true });
  const { onProgress, ...source } = options ?? ({} as typeof options);
  const history = loadHistoryFile(source);
  const r = await importTurns(engine, history.turns, { onProgress });
  return { ...r, history };
}
