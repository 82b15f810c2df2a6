import { constants, isUtf8 } from 'node:buffer';
import { readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { sourceError } from './source-error.js';

/** The zstd frame's magic number, 0xFD2FB528 little-endian. */
const isZstd = (b: Buffer): boolean =>
  b.length >= 4 && b[0] === 0x28 && b[1] === 0xb5 && b[2] === 0x2f && b[3] === 0xfd;

/**
 * The most bytes (unpacked) one import reads: UTF-8 text longer than this is more characters
 * than a JavaScript string holds (a character takes at most 3 bytes per UTF-16 unit), about
 * 1.5 GiB.
 */
export const MAX_SOURCE_BYTES = 3 * constants.MAX_STRING_LENGTH;

const tooLarge = (path: string, what: string) =>
  sourceError(
    path,
    null,
    `too large: ${what} than one import can read (${constants.MAX_STRING_LENGTH.toLocaleString('en-US')} characters, about 512 MiB); import a shorter history`,
  );

/** What the common read failures mean, said in words. */
const READ_FAILURES: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'a directory, not a history file',
  EACCES: 'cannot read (permission denied, EACCES)',
};

/** How an import source is named in messages: `-` is standard input. */
export function sourceName(path: string): string {
  return path === '-' ? 'standard input' : path;
}

/** The bytes of a file, or of standard input for `-`; null when there are more than `maxBytes`. */
function readBytes(path: string, maxBytes: number): Buffer | null {
  try {
    if (path === '-') {
      const bytes = readFileSync(0);
      return bytes.length <= maxBytes ? bytes : null;
    }
    // The size is checked first, so a file too large is not read into memory for nothing.
    return statSync(path).size <= maxBytes ? readFileSync(path) : null;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_FS_FILE_TOO_LARGE') return null;
    throw sourceError(
      sourceName(path),
      null,
      READ_FAILURES[code ?? ''] ?? `cannot read (${code ?? e})`,
    );
  }
}

/**
 * Reads an import file (or standard input, for `-`) as text. Gzip input (`.gz`, or the gzip
 * magic bytes) is decompressed in memory with zlib, up to `maxBytes` (default {@link
 * MAX_SOURCE_BYTES}); a file or an unpacked text past it is refused as too large; zstd input is
 * refused with what to do; the text must be valid UTF-8 (a leading BOM is dropped).
 *
 * @example
 * const text = readSourceText('session.jsonl.gz');
 */
export function readSourceText(file: string, maxBytes = MAX_SOURCE_BYTES): string {
  const path = sourceName(file);
  let bytes = readBytes(file, maxBytes);
  const bound = maxBytes.toLocaleString('en-US');
  if (bytes === null) throw tooLarge(path, `it is more than ${bound} bytes, more text`);
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: maxBytes });
    } catch (e) {
      // Past the bound zlib stops with ERR_BUFFER_TOO_LARGE ("Cannot create a Buffer larger
      // than …"), which was reported as a broken gzip file.
      if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
        throw tooLarge(path, `it unpacks to more than ${bound} bytes, more text`);
      throw sourceError(path, null, `not a valid gzip file (${(e as Error).message})`);
    }
  } else if (path.endsWith('.gz')) {
    throw sourceError(path, null, 'named .gz but is not gzip data');
  } else if (isZstd(bytes)) {
    // Newer Codex CLI versions compress rollouts (`.jsonl.zst`); Node 20's zlib has no zstd.
    throw sourceError(
      path,
      null,
      'zstd-compressed: decompress it first (zstd -d FILE), then import the result',
    );
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (e) {
    // Valid text longer than a JavaScript string can be was reported as "not valid UTF-8".
    if ((e as NodeJS.ErrnoException).code === 'ERR_STRING_TOO_LONG') {
      throw tooLarge(path, 'its text is longer');
    }
    throw sourceError(
      path,
      firstInvalidLine(bytes),
      'not valid UTF-8 text (history files are read as UTF-8: convert this one first)',
    );
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * The 1-based line holding the first byte that is not UTF-8 (a newline byte is never part of a
 * multi-byte character, so lines can be checked one by one); null when none is found.
 */
function firstInvalidLine(bytes: Buffer): number | null {
  let line = 1;
  for (let start = 0; start <= bytes.length; line++) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl;
    if (!isUtf8(bytes.subarray(start, end))) return line;
    if (nl === -1) break;
    start = nl + 1;
  }
  return null;
}
