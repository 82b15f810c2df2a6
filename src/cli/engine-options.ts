import type { Command } from 'commander';
import { ContextFold } from '../engine/context-fold.js';
import type { IndexWarning, OpenOptions, RetrievalMode } from '../engine/types.js';
import type { LiveOverflow } from '../harness/live-excerpt.js';
import { UsageError } from '../protocol/errors.js';
import { globals, requireStore } from './context.js';

/** The `--no-redact` option of the commands that write to a store. */
export const NO_REDACT_FLAG = '--no-redact';
/** Its help text. */
export const NO_REDACT_HELP =
  'store payloads as given, without secret redaction (nodes say sanitized: false)';

/**
 * Checks the values of `--tokenizer` and `--retrieval` (a bad one is a UsageError).
 *
 * @example
 * checkEngineFlags({ retrieval: 'ranked' }); // { tokenizer: undefined, retrieval: 'ranked' }
 */
export function checkEngineFlags(o: { tokenizer?: string; retrieval?: string }): {
  tokenizer: 'o200k' | 'reference' | undefined;
  retrieval: RetrievalMode | undefined;
} {
  if (o.tokenizer !== undefined && o.tokenizer !== 'o200k' && o.tokenizer !== 'reference') {
    throw new UsageError(`--tokenizer must be 'o200k' or 'reference', got '${o.tokenizer}'`);
  }
  if (o.retrieval !== undefined && o.retrieval !== 'reference' && o.retrieval !== 'ranked') {
    throw new UsageError(`--retrieval must be 'reference' or 'ranked', got '${o.retrieval}'`);
  }
  return { tokenizer: o.tokenizer, retrieval: o.retrieval };
}

/**
 * Engine options from the global CLI flags (`--dir`, `--tokenizer`, `--session`, `--retrieval`)
 * and a write command's `--no-redact`.
 */
export function engineOptions(cmd: Command): OpenOptions {
  const g = globals(cmd);
  const o = cmd.optsWithGlobals() as {
    tokenizer?: string;
    session?: string;
    retrieval?: string;
    redact?: boolean;
  };
  const flags = checkEngineFlags(o);
  return {
    dir: g.dir,
    tokenizer: flags.tokenizer,
    sessionId: o.session,
    retrieval: flags.retrieval,
    onWarning: printWarning,
    ...(o.redact === false ? { redact: false } : {}),
  };
}

/** One line on stderr per warning (stdout stays the result, with or without `--json`). */
export function printWarning(w: IndexWarning): void {
  process.stderr.write(`contextfold: warning: ${w.message}\n`);
}

/**
 * Opens the engine for a command, runs `fn`, and closes it. The store must exist unless the
 * command creates it (`create: true`, e.g. `fold`): a missing store is one line, exit 1. Write
 * commands (`write: true`) compact the journal on close so the store is left in the exact
 * reference layout; read commands never write.
 */
export async function withEngine<T>(
  cmd: Command,
  fn: (cf: ContextFold) => Promise<T>,
  options: { write?: boolean; create?: boolean } = {},
): Promise<T> {
  const opts = engineOptions(cmd);
  if (!options.create) requireStore(opts.dir!);
  const cf = await ContextFold.open({ ...opts, mustExist: !options.create });
  try {
    return await fn(cf);
  } finally {
    await cf.close({ compact: options.write ?? false });
  }
}

/** The `--live-overflow` value, or a one-line usage error. */
export function parseLiveOverflow(value: string): LiveOverflow {
  if (value === 'excerpt' || value === 'send-whole') return value;
  throw new UsageError(`--live-overflow must be 'excerpt' or 'send-whole', got '${value}'`);
}
