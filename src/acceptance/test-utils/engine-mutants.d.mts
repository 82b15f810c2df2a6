/** The engine mutations of the adapter mutation tests (see engine-mutants.mjs). */
export type EngineMutant = 'verification' | 'eviction' | 'isolation';

/** Wraps every engine `ContextFoldClass.open` returns with the named mutant; returns the undo. */
export function installEngineMutant(
  ContextFoldClass: { open: (options: never) => Promise<unknown> },
  name: EngineMutant,
): () => void;
