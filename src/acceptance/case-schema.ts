import { z } from 'zod';

/**
 * The adapter acceptance case file (`conformance/adapters/cases.v1.json`), defined once: this
 * schema validates the file at load and is published as `conformance/adapters/cases.schema.json`
 * (generated from it; a test keeps the two equal).
 */

const id = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*(?:--[a-z0-9]+(?:-[a-z0-9]+)*)?$/);
const name = z.string().regex(/^[a-z][a-z0-9_-]*$/);
const conjunct = z.string().regex(/^[a-z][a-z0-9_]*$/);
const requirement = z.string().regex(/^(CONF-[0-9]{2}|SEC-[A-Z]+)$/);
const semver = z.string().regex(/^[0-9]+\.[0-9]+\.[0-9]+$/);
const nonEmpty = z.string().min(1);

const tool = z
  .object({
    name: nonEmpty.describe('tool name, e.g. Bash'),
    input: z.record(z.string(), z.unknown()).describe('the tool call input'),
    output: z.string().describe('the tool result text (where a record marker lives)'),
    is_error: z.boolean().optional(),
  })
  .strict();

/** One exchange of the history: a user message, a tool call with its result, an assistant reply. */
const turn = z
  .object({
    record: name
      .optional()
      .describe(
        'a name for the node holding this turn’s tool output; expectations and store actions use it',
      ),
    marker: nonEmpty
      .optional()
      .describe(
        'text that occurs in exactly one archived node: the one holding this turn’s tool output',
      ),
    archived: z
      .boolean()
      .optional()
      .describe(
        'true: every integration archives the record before the calls (checked after setup; default false)',
      ),
    host_context: z
      .enum(['compacted', 'live'])
      .optional()
      .describe(
        'for integrations whose host owns the prompt (Claude Code): live = still verbatim in the host’s context (after its last compaction); default compacted',
      ),
    user: nonEmpty.optional(),
    tool: tool.optional(),
    assistant: nonEmpty.optional(),
  })
  .strict();

const session = z.object({ history: z.array(turn).min(1) }).strict();

const recordRef = { session: name.default('main'), record: name };

/** A change of the store after setup: what a crash, an attacker or another session left behind. */
const storeAction = z.discriminatedUnion('action', [
  z
    .object({
      action: z.literal('edit_payload'),
      ...recordRef,
      find: nonEmpty,
      replace: z.string(),
    })
    .strict()
    .describe('edit the node’s raw_content in place (its artifact_sha256 no longer verifies)'),
  z
    .object({
      action: z.literal('forge_payload'),
      ...recordRef,
      find: nonEmpty,
      replace: z.string(),
    })
    .strict()
    .describe(
      'edit raw_content and recompute artifact_sha256 in the node and the index (a forged artifact hash: only payload_sha256 catches it)',
    ),
  z
    .object({
      action: z.literal('truncate_node'),
      ...recordRef,
      drop_bytes: z.number().int().min(1),
    })
    .strict()
    .describe('a partial write: drop bytes from the end of the node file'),
  z
    .object({ action: z.literal('delete_node'), ...recordRef })
    .strict()
    .describe('the node file is missing, its index entry remains (a broken reference)'),
  z
    .object({ action: z.literal('unindex_node'), ...recordRef })
    .strict()
    .describe('the index entry is removed, the node file remains (an orphaned node)'),
  z
    .object({
      action: z.literal('escape_file_path'),
      ...recordRef,
      style: z.enum(['absolute', 'dotdot']),
      inject: z.string().describe('text appended to raw_content of the outside copy'),
    })
    .strict()
    .describe(
      'copy the node outside the store (with injected text) and point the index file_path at the copy',
    ),
  z
    .object({ action: z.literal('symlink_node'), ...recordRef })
    .strict()
    .describe(
      'replace the node file with a symlink to a byte-identical copy outside the store (only containment catches it)',
    ),
  z
    .object({ action: z.literal('symlink_cold_dir'), session: name.default('main') })
    .strict()
    .describe('replace cold_nodes/ with a symlink to a copy outside the store'),
  z
    .object({
      action: z.literal('copy_foreign_node'),
      ...recordRef,
      from_session: name,
      from_record: name,
    })
    .strict()
    .describe('overwrite the record’s node file with another session’s node file'),
  z
    .object({
      action: z.literal('plant_foreign_orphan'),
      session: name.default('main'),
      from_session: name,
      from_record: name,
      step_id: z.number().int().nonnegative(),
    })
    .strict()
    .describe('copy another session’s node into this store under a step id with no index entry'),
  z
    .object({
      action: z.literal('point_into_session'),
      ...recordRef,
      from_session: name,
      from_record: name,
    })
    .strict()
    .describe('set the record’s index file_path to the other session’s node file'),
]);

const call = z
  .object({ session: name.default('main'), prompt: nonEmpty })
  .strict()
  .describe('one model call of a session: the prompt the user sends');

const recordList = z.array(z.string());

const callExpect = z
  .object({
    proceeded: z
      .boolean()
      .optional()
      .describe('the model was called (the integration did not stop the turn)'),
    paged: z
      .object({
        includes: recordList.optional(),
        excludes: recordList.optional(),
        exactly: recordList.optional(),
      })
      .strict()
      .optional()
      .describe(
        'records paged into this call (pages are recognised by their payload hash; a page of no record counts as "?<hash>")',
      ),
    refused: z
      .object({
        includes: z
          .array(
            z
              .object({
                record: name,
                error: nonEmpty.describe(
                  'an IPCF error name; a kind of it matches (PathContainmentError is an IntegrityCheckError)',
                ),
              })
              .strict(),
          )
          .optional(),
        excludes: recordList.optional(),
      })
      .strict()
      .optional()
      .describe('records the integration refused for this call and reported'),
    model_input: z
      .object({ contains: recordList.optional(), excludes: recordList.optional() })
      .strict()
      .optional()
      .describe('text that must (not) occur in what the model receives'),
    pages_verified: z
      .literal(true)
      .optional()
      .describe(
        'every page is a contiguous piece of its node’s verified payload (or such a piece, an elision line `[…]` and the payload’s last lines), carries that payload’s hash, and says so when it is not the whole payload',
      ),
    page_tokens_max: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('the pages of this call hold at most this many tokens (reference estimator)'),
    previous_pages_gone: z
      .literal(true)
      .optional()
      .describe('no record paged into the previous call is paged into this one'),
  })
  .strict();

const storeExpect = z
  .object({
    excludes: recordList
      .optional()
      .describe('text that no file the integration wrote may contain (store, logs, state, cache)'),
    unrepaired: z
      .literal(true)
      .optional()
      .describe(
        'after the calls, every store action’s effect is still on disk: nothing was silently repaired',
      ),
  })
  .strict();

const anchor = z.discriminatedUnion('surface', [
  z
    .object({
      surface: z.literal('spec'),
      document: z.enum(['CONFORMANCE-IPCF-001', 'RFC-IPCF-001']),
      clause: nonEmpty.describe('a CONF id (the marker must be on its line) or a section name'),
      marker: nonEmpty.describe('text the document contains'),
    })
    .strict(),
  z
    .object({
      surface: z.enum(['code', 'protocol']),
      path: z
        .string()
        .regex(/^(src|conformance)\/[A-Za-z0-9_./-]+$/)
        .describe('a file of this package (src/*.ts is checked in dist/*.js where src is absent)'),
      marker: nonEmpty.describe('text the file contains'),
    })
    .strict(),
]);

const strictnessAllowance = z
  .object({
    conjunct,
    description: nonEmpty,
    present_when: z
      .record(z.string(), z.unknown())
      .refine((o) => Object.keys(o).length > 0, 'present_when needs at least one path')
      .describe('dotted paths into the case input and the value each must have'),
    absence_case_id: id,
  })
  .strict();

const caseSchema = z
  .object({
    id,
    title: nonEmpty,
    class: z.enum(['safety', 'liveness']),
    profiles: z.array(name).min(1),
    requirements: z.array(requirement).min(1),
    input: z
      .object({
        policy: z.record(z.string(), z.unknown()).optional(),
        sessions: z.record(name, session),
        store: z.array(storeAction).default([]),
        calls: z.array(call).min(1),
      })
      .strict(),
    expect: z.object({ calls: z.array(callExpect).min(1), store: storeExpect.optional() }).strict(),
    strictness_allowed: z.array(strictnessAllowance),
    source: z.array(anchor).min(1),
  })
  .strict();

/** The whole case file. */
export const caseFileSchema = z
  .object({
    $schema: z.string().optional(),
    suite: nonEmpty,
    version: semver,
    contract: nonEmpty,
    changelog: z
      .array(
        z
          .object({ version: semver, kind: z.enum(['major', 'minor', 'patch']), reason: nonEmpty })
          .strict(),
      )
      .min(1),
    requirements: z.record(requirement, nonEmpty),
    profiles: z.record(name, z.object({ description: nonEmpty }).strict()),
    cases: z.array(caseSchema).min(1),
  })
  .strict();

/** The adapter acceptance case file (`conformance/adapters/cases.v1.json`), validated. */
export type CaseFile = z.infer<typeof caseFileSchema>;
/** One acceptance case of the case file. */
export type AcceptanceCase = CaseFile['cases'][number];
/** The input of a case: the history, store actions and the prompt. */
export type CaseInputDoc = AcceptanceCase['input'];
/** One turn of a case's history. */
export type HistoryTurn = z.infer<typeof turn>;
/** An action a case performs on the store between calls (tamper, remove, …). */
export type StoreAction = z.infer<typeof storeAction>;
/** What a case expects of the model call it observes. */
export type CallExpect = z.infer<typeof callExpect>;
/** What a case expects of the store afterwards. */
export type StoreExpect = z.infer<typeof storeExpect>;
/** Where in the contract or spec a case comes from. */
export type SourceAnchor = z.infer<typeof anchor>;
/** A declared strictness that excuses a case, and the cases it excuses. */
export type StrictnessAllowance = z.infer<typeof strictnessAllowance>;

/**
 * The published JSON Schema of the case file (draft 2020-12), generated from {@link caseFileSchema}.
 *
 * @example
 * writeFileSync('cases.schema.json', `${JSON.stringify(caseFileJsonSchema(), null, 2)}\n`);
 */
export function caseFileJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(caseFileSchema, { target: 'draft-2020-12', io: 'input' }),
    $id: 'https://github.com/contextfold/contextfold/conformance/adapters/cases.schema.json',
    title: 'contextfold adapter acceptance cases',
    description:
      'One case file every integration runs (conformance/adapters/README.md). Generated from src/acceptance/case-schema.ts.',
  };
}
