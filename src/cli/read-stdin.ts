/**
 * Reads standard input to its end as UTF-8 text, waiting for a writer that is slow to send it.
 *
 * `readFileSync(0)` fails with EAGAIN when stdin is a pipe or socket in non-blocking mode and no
 * byte has arrived yet, and touching `process.stdin` (even `process.stdin.isTTY`) puts it in that
 * mode: a hook process that got there before Claude Code (or a loaded machine) wrote the hook
 * input exited with an internal error, and the prompt went on without its context. Reading the
 * stream waits, whatever the mode.
 *
 * @example
 * const input = await readStdinText(); // the hook input JSON Claude Code wrote
 */
export async function readStdinText(
  stdin: AsyncIterable<Buffer | string> = process.stdin,
): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stdin) chunks.push(typeof c === 'string' ? Buffer.from(c, 'utf8') : c);
  return Buffer.concat(chunks).toString('utf8');
}
