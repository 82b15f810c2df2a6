/** What a command's `--help` says after its options. */
export interface HelpText {
  /** Lines before the examples, as printed ('' for a blank line). */
  notes?: readonly string[];
  /** Examples, each printed indented by two spaces: a command line, or the lines of one. */
  examples: readonly (string | readonly string[])[];
  /** Lines after the examples, as printed. */
  footer?: readonly string[];
}

/**
 * The text for `.addHelpText('after', …)`: a blank line, the notes, then `Example:` (one) or
 * `Examples:` and the examples indented, then the footer.
 *
 * @example
 * helpText({ notes: ['Read-only.', ''], examples: ['contextfold recall "port"'] });
 * // '\nRead-only.\n\nExample:\n  contextfold recall "port"'
 */
export function helpText({ notes = [], examples, footer = [] }: HelpText): string {
  const indented = examples.flat().map((line) => `  ${line}`);
  const heading = examples.length === 1 ? 'Example:' : 'Examples:';
  return ['', ...notes, heading, ...indented, ...footer].join('\n');
}
