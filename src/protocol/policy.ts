import { canonicalSha256 } from './canonical-json.js';
import { UsageError } from './errors.js';
import { checkPolicy } from './schemas.js';

/** The hydration policy (hydration_policy.json): per-call and per-turn caps, single-turn scope. */
export interface HydrationPolicy {
  policy_version?: string;
  max_rehydration_tokens_per_call: number;
  max_rehydration_tokens_per_turn?: number;
  scope: 'single_turn';
  eviction_trigger: 'after_response';
  integrity_verification?: boolean;
  [extra: string]: unknown;
}

/** The reference default; `folding_policy_hash` hashes exactly this object when no policy file exists. */
export const DEFAULT_POLICY: Readonly<HydrationPolicy> = Object.freeze({
  policy_version: '1.1',
  max_rehydration_tokens_per_call: 3000,
  max_rehydration_tokens_per_turn: 3500,
  scope: 'single_turn',
  eviction_trigger: 'after_response',
  integrity_verification: true,
});

/**
 * Validates a policy object at the boundary, throwing a one-line {@link UsageError}.
 *
 * @example
 * parsePolicy({ ...DEFAULT_POLICY, max_rehydration_tokens_per_turn: 1000 });
 */
export function parsePolicy(value: unknown, source = 'policy'): HydrationPolicy {
  const problem = checkPolicy(value);
  if (problem) throw new UsageError(`invalid hydration policy in ${source}: ${problem}`);
  return { ...(value as HydrationPolicy) };
}

/**
 * `folding_policy_hash`: hex SHA-256 of the canonical JSON of the active policy object.
 *
 * @example
 * policyHash(DEFAULT_POLICY).slice(0, 12); // '2ea9c87d4403'
 */
export function policyHash(policy: HydrationPolicy): string {
  return canonicalSha256(policy);
}

/** The per-turn cap, defaulting as the reference does. */
export function perTurnCap(policy: HydrationPolicy): number {
  return policy.max_rehydration_tokens_per_turn ?? 3500;
}
