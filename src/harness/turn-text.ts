/**
 * The text of a turn as it is folded, shared by every path that writes turns (importers, the
 * Claude Code hook, the proxy's history and the harness `Session`), so the same turn is the
 * same payload bytes whichever path archives it (see docs/store-format.md, "Step ids and
 * payloads").
 */

/** `[tool_use: Bash id=toolu_1]` — the label the shared trajectories use too. */
export function toolUseLabel(name: string, id: string): string {
  return `[tool_use: ${name} id=${id}]`;
}

/**
 * `[tool_result: Bash id=toolu_1]`, with ` exit=<n>` when an exit code is known (the harness
 * model has one; transcripts do not) and ` error` when the tool reported a failure.
 */
export function toolResultLabel(
  name: string | null,
  id: string,
  isError: boolean,
  exitCode?: number,
): string {
  const exit = exitCode === undefined ? '' : ` exit=${exitCode}`;
  return `[tool_result: ${name === null ? '' : `${name} `}id=${id}${exit}${isError ? ' error' : ''}]`;
}

/**
 * Tool input as the turn shows it: the JSON value, one space per level (as the shared data),
 * keys in the order the history holds them.
 */
export function renderToolInput(input: unknown): string {
  return JSON.stringify(input ?? {}, null, 1);
}
