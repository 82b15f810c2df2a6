import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { sourceError } from './source-error.js';

/**
 * Reads an import file as text. Gzip input (`.gz`, or the gzip magic bytes) is decompressed in
 * memory with zlib; the text must be valid UTF-8 (a leading BOM is dropped).
 *
 * @example
 * const text = readSourceText('session.jsonl.gz');
 */
export function readSourceText(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw sourceError(
      path,
      null,
      code === 'ENOENT' ? 'no such file' : `cannot read (${code ?? e})`,
    );
  }
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (e) {
      throw sourceError(path, null, `not a valid gzip file (${(e as Error).message})`);
    }
  } else if (path.endsWith('.gz')) {
    throw sourceError(path, null, 'named .gz but is not gzip data');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw sourceError(path, null, 'not valid UTF-8 text');
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
