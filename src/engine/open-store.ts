// What an engine opens under it: the backend of its store (a directory or a PostgreSQL URL) and
// the hydration policy a store directory carries. Kept apart from the engine so the facade reads
// as operations, not set-up.
import { existsSync, readFileSync } from 'node:fs';
import { UsageError } from '../protocol/errors.js';
import { DEFAULT_POLICY, type HydrationPolicy, parsePolicy } from '../protocol/policy.js';
import { analysisKey, RANKED_ANALYZER_VERSION } from '../retrieval/node-analysis.js';
import type { StoreLayout } from '../store/layout.js';
import { LocalStore } from '../store/local-store.js';
import type { PgStore } from '../store/pg/pg-store.js';
import type { OpenOptions } from './types.js';

/** The backend an engine runs on: the engine's modules take it as the engine holds it. */
export type EngineStore = LocalStore | PgStore;

/** The store class for a database URL when PostgreSQL was not loaded (open() loads it). */
function noPg(where: string): never {
  throw new UsageError(`${where} is a PostgreSQL store: open it with ContextFold.open`);
}

/** The policy a store directory keeps in its policy file, or the default when it has none. */
export function readPolicy(layout: StoreLayout): HydrationPolicy {
  if (!existsSync(layout.policyPath)) return { ...DEFAULT_POLICY };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(layout.policyPath, 'utf8'));
  } catch {
    throw new UsageError(`hydration policy is not valid JSON: ${layout.policyPath}`, {
      path: layout.policyPath,
    });
  }
  return parsePolicy(parsed, layout.policyPath);
}

/**
 * The backend for `where`: a local store over `layout`, or (no layout) a PostgreSQL store of the
 * class `open()` loaded, which a database URL needs.
 */
export function openBackend(
  where: string,
  layout: StoreLayout | null,
  options: OpenOptions,
  clock: () => Date,
  pgStore?: typeof PgStore,
): EngineStore {
  const analyzer = { version: RANKED_ANALYZER_VERSION, keyOf: analysisKey };
  return layout
    ? new LocalStore(layout, {
        lockTimeoutMs: options.lockTimeoutMs ?? 30_000,
        compactThreshold: options.journalCompactThreshold ?? 4096,
        clock,
        analyzer,
        onWarning: options.onWarning,
        readOnly: options.readOnly,
      })
    : new (pgStore ?? noPg(where))({
        url: where,
        lockTimeoutMs: options.lockTimeoutMs ?? 30_000,
        statementTimeoutMs: options.statementTimeoutMs,
        poolSize: options.poolSize,
        clock,
        analyzer,
        onWarning: options.onWarning,
        readOnly: options.readOnly,
      });
}
