import { z } from 'zod';

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const strings = z.array(z.string());

/** zod schema of one recall index entry (required fields of the published schema, plus ours). */
export const indexEntrySchema = z
  .object({
    step_id: z.number().int().nonnegative(),
    payload_sha256: hex64,
    projection_sha256: hex64,
    artifact_sha256: hex64,
    file_path: z.string(),
    folded_at: z.string(),
    evicted: z.boolean(),
    // Optional in the published schema; the loader fills in neutral defaults.
    projection_version: z.string().optional(),
    summary: z.string().optional(),
    token_estimate: z.number().int().optional(),
    identifiers: strings.optional(),
    files: strings.optional(),
    commands: strings.optional(),
    errors: strings.optional(),
  })
  .loose();

/** zod schema of `recall_index.json`. */
export const recallIndexSchema = z
  .object({
    ipcf_version: z.string(),
    projection_version: z.string(),
    nodes: z.record(z.string(), z.unknown()),
    created_at: z.string().optional(),
    session_id: z.string().optional(),
  })
  .loose();

/** zod schema of `eviction_log.json`. */
export const evictionLogSchema = z.object({
  evicted: z.array(z.object({ step_id: z.number().int(), evicted_at: z.string() }).loose()),
});

/** One-line description of the first zod issue. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : '(root)';
  return `${where}: ${issue?.message}`;
}
