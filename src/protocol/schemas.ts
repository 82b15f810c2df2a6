/**
 * Boundary checks of the persisted formats (the published JSON Schemas' required fields and
 * types). Hand-written rather than zod: they run on every index entry at load (100k entries
 * must load fast) and keep CLI start-up free of a schema library. Each returns null when the
 * value is valid, else `"<field path>: <what is wrong>"`.
 */

const HEX64 = /^[0-9a-f]{64}$/;

/** A field check: null when the value is valid, else what is wrong with it. */
export type Check = (v: unknown) => string | null;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string. */
export const str: Check = (v) => (typeof v === 'string' ? null : 'expected a string');
const hex: Check = (v) =>
  typeof v === 'string' && HEX64.test(v) ? null : 'expected 64 lower-case hex digits';
const bool: Check = (v) => (typeof v === 'boolean' ? null : 'expected a boolean');
const int: Check = (v) => (Number.isSafeInteger(v) ? null : 'expected an integer');
const nonNegInt: Check = (v) =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? null : 'expected a non-negative integer';
const strings: Check = (v) =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? null : 'expected an array of strings';

/**
 * Checks an object's required and optional fields (other fields are allowed): null when valid,
 * else the first problem as `"<field>: <what is wrong>"`.
 *
 * @example
 * checkFields({ id: 3 }, { id: str }); // "id: expected a string"
 */
export function checkFields(
  v: unknown,
  required: Record<string, Check>,
  optional: Record<string, Check> = {},
): string | null {
  if (!isObject(v)) return '(root): expected an object';
  for (const [k, check] of Object.entries(required)) {
    if (!(k in v)) return `${k}: required`;
    const e = check(v[k]);
    if (e) return `${k}: ${e}`;
  }
  for (const [k, check] of Object.entries(optional)) {
    if (v[k] === undefined) continue;
    const e = check(v[k]);
    if (e) return `${k}: ${e}`;
  }
  return null;
}

/** Checks one recall index entry (required: the published schema's; optional fields typed). */
export function checkIndexEntry(v: unknown): string | null {
  return checkFields(
    v,
    {
      step_id: nonNegInt,
      payload_sha256: hex,
      projection_sha256: hex,
      artifact_sha256: hex,
      file_path: str,
      folded_at: str,
      evicted: bool,
    },
    {
      projection_version: str,
      summary: str,
      token_estimate: int,
      identifiers: strings,
      files: strings,
      commands: strings,
      errors: strings,
    },
  );
}

/** Checks the top level of `recall_index.json` (entries are checked one by one). */
export function checkRecallIndex(v: unknown): string | null {
  return checkFields(
    v,
    {
      ipcf_version: str,
      projection_version: str,
      nodes: (n) => (isObject(n) ? null : 'expected an object'),
    },
    { created_at: str, session_id: str },
  );
}

/** Checks `eviction_log.json`. */
export function checkEvictionLog(v: unknown): string | null {
  return checkFields(v, {
    evicted: (list) => {
      if (!Array.isArray(list)) return 'expected an array';
      for (let i = 0; i < list.length; i++) {
        const e = checkFields(list[i], { step_id: int, evicted_at: str });
        if (e) return `[${i}].${e}`;
      }
      return null;
    },
  });
}

/** Checks a hydration policy object (hydration_policy.schema.json). */
export function checkPolicy(v: unknown): string | null {
  const positive: Check = (x) =>
    Number.isSafeInteger(x) && (x as number) > 0 ? null : 'expected a positive integer';
  return checkFields(
    v,
    {
      max_rehydration_tokens_per_call: positive,
      scope: (x) => (x === 'single_turn' ? null : "expected 'single_turn'"),
      eviction_trigger: (x) => (x === 'after_response' ? null : "expected 'after_response'"),
    },
    {
      policy_version: str,
      max_rehydration_tokens_per_turn: positive,
      integrity_verification: bool,
    },
  );
}
