// The keys of the engine's per-call options: a misspelt `maxTokenz` or `chunck` was ignored and
// the default served silently, while `ContextFold.open` refused it. Each list is typed by its
// options type, so the compiler keeps it complete; `checkOptionKeys` allocates nothing for
// known keys, so the check costs a scan nothing measurable.
import type { FoldInput, HydrateOptions, ScanOptions } from './types.js';

/** Every option of `scan` and `pageIn`. */
export const SCAN_OPTION_KEYS: Record<keyof ScanOptions, true> = {
  mode: true,
  liveFrom: true,
  lossy: true,
  maxTokens: true,
  tail: true,
};

/** Every option of `hydrate`. */
export const HYDRATE_OPTION_KEYS: Record<keyof HydrateOptions, true> = {
  window: true,
  chunk: true,
  maxTokens: true,
};

/** Every field of a fold input (`fold`, `foldMany`): a misspelt `contnet` folded the summary as the payload. */
export const FOLD_INPUT_KEYS: Record<keyof FoldInput, true> = {
  stepId: true,
  summary: true,
  content: true,
  files: true,
  commands: true,
  errors: true,
};

/** The option of `recall`. */
export const RECALL_OPTION_KEYS = { limit: true } as const;
/** The options of `entriesAfter`. */
export const ENTRIES_AFTER_OPTION_KEYS = { after: true, limit: true } as const;
/** The options of `entriesPage`. */
export const ENTRIES_PAGE_OPTION_KEYS = { offset: true, limit: true } as const;
/** The option of `entryPages`. */
export const ENTRY_PAGES_OPTION_KEYS = { pageSize: true } as const;
/** The option of `reindex`. */
export const REINDEX_OPTION_KEYS = { onProgress: true } as const;
/** The option of `close`. */
export const CLOSE_OPTION_KEYS = { compact: true } as const;
