import { readFileSync } from 'node:fs';
import { UsageError } from '../protocol/errors.js';

/** Decodes UTF-8 input strictly and drops one trailing line break (as shell `$(…)` does). */
function decodeText(bytes: Buffer, source: string): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${source} is not valid UTF-8 text`);
  }
  return text.replace(/\r?\n$/, '');
}

/** What the common read failures mean, said in words (the code follows in parentheses). */
const READ_FAILURES: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory, not a file',
  EACCES: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
};

/** Reads a file, or standard input for `-`, as bytes; a read failure is one usage line. */
export function readInput(path: string): Buffer {
  try {
    return path === '-' ? readFileSync(0) : readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === undefined ? String(e) : `${READ_FAILURES[code] ?? 'error'} (${code})`;
    throw new UsageError(`cannot read ${path === '-' ? 'standard input' : path}: ${why}`, {
      path,
    });
  }
}

/**
 * A text argument (a prompt, a query, a summary): the argument itself, `-` for standard input,
 * or the file named by its `--<name>-file` option. Input read from stdin or a file is strict
 * UTF-8 with one trailing line break dropped. Texts over the OS argument limit (128 KB on
 * Linux) can only come through stdin or a file.
 *
 * @example
 * textArg({ value: prompt, file: opts.promptFile, name: 'PROMPT', fileOption: '--prompt-file' });
 */
export function textArg(options: {
  value: string | undefined;
  file: string | undefined;
  name: string;
  fileOption: string;
}): string {
  const { value, file, name, fileOption } = options;
  if (value !== undefined && file !== undefined) {
    throw new UsageError(`give ${name} or ${fileOption} FILE, not both`);
  }
  if (file !== undefined) return decodeText(readInput(file), file);
  if (value === undefined) {
    throw new UsageError(
      `${name} is missing: give it as an argument, '-' to read standard input, or ${fileOption} FILE`,
    );
  }
  return value === '-' ? decodeText(readInput('-'), 'standard input') : value;
}
