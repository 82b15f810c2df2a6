import { z } from 'zod';
import { UsageError } from '../../protocol/errors.js';

/** The hook events contextfold handles, as the CLI spells them. */
export type HookEvent = 'user-prompt-submit' | 'pre-compact' | 'session-start';

/** Every {@link HookEvent}. */
export const HOOK_EVENTS: readonly HookEvent[] = [
  'user-prompt-submit',
  'pre-compact',
  'session-start',
];

/** Claude Code's name of each event (`hook_event_name`, settings.json keys). */
export const CLAUDE_EVENT_NAMES: Record<HookEvent, string> = {
  'user-prompt-submit': 'UserPromptSubmit',
  'pre-compact': 'PreCompact',
  'session-start': 'SessionStart',
};

const inputSchema = z
  .object({
    session_id: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,200}$/, 'must be a plain id (letters, digits, . _ -)'),
    transcript_path: z.string().min(1),
    cwd: z.string().optional(),
    hook_event_name: z.string().optional(),
    prompt: z.string().optional(),
    source: z.string().optional(),
    trigger: z.string().optional(),
  })
  .loose();

/**
 * The JSON a Claude Code command hook receives on stdin (common fields plus the event's own:
 * `prompt` for UserPromptSubmit, `trigger` for PreCompact, `source` for SessionStart).
 */
export type HookInput = z.infer<typeof inputSchema>;

/**
 * Parses and checks the hook input. The session id becomes a directory name, so only plain ids
 * are accepted.
 *
 * @example
 * parseHookInput('{"session_id":"abc","transcript_path":"/t.jsonl","prompt":"hi"}', 'user-prompt-submit');
 */
export function parseHookInput(text: string, event: HookEvent): HookInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(
      `hook input on stdin is not JSON; contextfold hook ${event} is meant to be run by Claude Code (see contextfold install claude-code)`,
    );
  }
  const r = inputSchema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new UsageError(`hook input: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  const expected = CLAUDE_EVENT_NAMES[event];
  if (r.data.hook_event_name !== undefined && r.data.hook_event_name !== expected) {
    throw new UsageError(
      `hook input is for ${r.data.hook_event_name}, but this is contextfold hook ${event} (${expected}); check the hooks in settings.json`,
    );
  }
  return r.data;
}
