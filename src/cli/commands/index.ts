import type { Command } from 'commander';

/** A CLI command module registers itself on the program. */
export type Register = (program: Command) => void;

/**
 * Every command the CLI has. One line per command module; keep alphabetical within groups.
 * (Helpers add their commands here.)
 */
export const commands: Register[] = [];
