import type { z as Z } from 'zod';

/** The literal `version` of every guard table file. */
export const GUARD_TABLE_VERSION = 'contextfold-guard-table/1';

const slug = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** `family:descriptor`, each a slug of single hyphens (so `__` and `--` stay free for case ids). */
export const PATTERN_ID_RE = /^([a-z0-9]+(?:-[a-z0-9]+)*):([a-z0-9]+(?:-[a-z0-9]+)*)$/;

/**
 * The published shape of a table file (`guard/<dir>/<name>.json`), built with the zod it is
 * given: the loader needs zod only for table bytes that are not the shipped ones (see
 * `tables.ts`), so the schemas are made on demand rather than when this module loads.
 *
 * @example
 * import { z } from 'zod';
 * guardTableSchemas(z).guardTableSchema.safeParse(JSON.parse(text)).success;
 */
export function guardTableSchemas(z: typeof Z) {
  const regexSpec = z.strictObject({
    pattern: z.string().min(1),
    flags: z.string().regex(/^[imsu]*$/, 'flags may only use i, m, s, u (g and d are added)'),
  });

  const matcher = z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('regex'),
      pattern: z.string().min(1),
      flags: z.string().regex(/^[imsu]*$/, 'flags may only use i, m, s, u (g and d are added)'),
      group: z.number().int().min(1).optional(),
      reject_value: regexSpec.optional(),
      within: regexSpec.optional(),
    }),
    z.strictObject({
      kind: z.literal('secretlint'),
      rule: z.string().regex(/^@secretlint\/secretlint-rule-[a-z0-9-]+$/),
      message_id: z.string().min(1),
      value: z.string().min(1),
      options: z.record(z.string(), z.unknown()).optional(),
    }),
    z.strictObject({ kind: z.literal('pem-block'), max_chars: z.number().int().min(64) }),
    z.strictObject({ kind: z.literal('repeated-value'), min_length: z.number().int().min(4) }),
    z.strictObject({
      kind: z.literal('mixed-script'),
      script: z.string().min(1),
      confusables: z.string().min(1),
    }),
  ]);

  const pattern = z.strictObject({
    id: z
      .string()
      .regex(PATTERN_ID_RE, 'id must be family:descriptor (lower-case, single hyphens)'),
    severity: z.enum(['low', 'medium', 'high']),
    description: z.string().min(1),
    owasp: z.string().min(1).optional(),
    matcher,
    trigger: regexSpec.optional(),
  });

  const guardTableSchema = z.strictObject({
    version: z.literal(GUARD_TABLE_VERSION),
    table: z.string().regex(/^[a-z0-9-]+\/[a-z0-9-]+\.json$/),
    kind: z.enum(['secrets', 'injection', 'active-content']),
    description: z.string().min(1),
    families: z
      .array(
        z.strictObject({
          id: z.string().regex(slug),
          description: z.string().min(1),
          patterns: z.array(pattern).min(1),
        }),
      )
      .min(1),
  });
  return { regexSpec, matcher, pattern, guardTableSchema };
}

/** A JavaScript regular expression as data: source and flags (`g` is added by the guard). */
export type RegexSpec = Z.infer<ReturnType<typeof guardTableSchemas>['regexSpec']>;

/**
 * How a pattern finds its spans. The matcher kinds are code; a table chooses one and gives its
 * parameters.
 * - `regex`: every match; `group` selects the span inside it, `reject_value` drops matches whose
 *   span is a reference or placeholder rather than a value, `within` runs the pattern only on
 *   the text of each match of another regex (a header's value), however far into it.
 * - `secretlint`: one message id of one rule of `@secretlint/secretlint-rule-preset-recommend`;
 *   `value` names the message data field holding the secret (its span is located from it).
 * - `pem-block`: a PEM private key block from BEGIN to END across any line breaks.
 * - `repeated-value`: every further occurrence of a value another pattern removed, in the same
 *   text or batch of texts (at least `min_length` characters, not letters only).
 * - `mixed-script`: a word (letters and marks) holding a letter of `script` and one of the
 *   `confusables` (letters of another script that look like letters of `script`).
 */
export type Matcher = Z.infer<ReturnType<typeof guardTableSchemas>['matcher']>;

/** One published pattern: `id` is `family:descriptor`, stable across versions. */
export type GuardPattern = Z.infer<ReturnType<typeof guardTableSchemas>['pattern']>;

/** A pattern table file as published under `guard/`. */
export type GuardTable = Z.infer<ReturnType<typeof guardTableSchemas>['guardTableSchema']>;

/** A family of patterns (the part of their ids before the `:`). */
export type GuardFamily = GuardTable['families'][number];
