import type { Command } from 'commander';

/** A CLI command module registers itself on the program. */
export type Register = (program: Command) => void;

/** What a command module exports. */
export interface CommandModule {
  register: Register;
}

/**
 * Every command the CLI has, loaded lazily: a run imports only the module of the command it
 * executes (start-up stays small; `--help` loads them all). One line per command.
 */
export const commandTable: { name: string; load: () => Promise<CommandModule> }[] = [
  // core engine
  { name: 'fold', load: () => import('./fold.js') },
  { name: 'scan', load: () => import('./scan.js') },
  { name: 'recall', load: () => import('./recall.js') },
  { name: 'hydrate', load: () => import('./hydrate.js') },
  { name: 'evict', load: () => import('./evict.js') },
  { name: 'status', load: () => import('./status.js') },
  { name: 'validate', load: () => import('./validate.js') },
  { name: 'compact', load: () => import('./compact.js') },
  { name: 'reindex', load: () => import('./reindex.js') },
  { name: 'repair', load: () => import('./repair.js') },
  { name: 'export', load: () => import('./export.js') },
  { name: 'import-store', load: () => import('./import-store.js') },
  { name: 'demo', load: () => import('./demo.js') },
  // harness
  { name: 'session', load: () => import('./session.js') },
  { name: 'pack', load: () => import('./pack.js') },
  { name: 'inspect', load: () => import('./inspect.js') },
  // integrations
  { name: 'import', load: () => import('./import.js') },
  { name: 'mcp', load: () => import('./mcp.js') },
  { name: 'hook', load: () => import('./hook.js') },
  { name: 'install', load: () => import('./install.js') },
  { name: 'proxy', load: () => import('./proxy.js') },
  // conformance and evaluation
  { name: 'conformance', load: () => import('./conformance.js') },
  { name: 'guard', load: () => import('./guard.js') },
  { name: 'subject', load: () => import('./subject.js') },
  { name: 'eval', load: () => import('./eval.js') },
];

/** Global options that take a value (so their value is not mistaken for a command name). */
const VALUE_OPTIONS = new Set(['--dir', '--store', '--tokenizer', '--retrieval', '--session']);

/** The command name in argv, if any (the first argument that is not a global option or its value). */
export function commandName(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return argv[i + 1];
    if (a.startsWith('-')) {
      if (VALUE_OPTIONS.has(a)) i++;
      continue;
    }
    return a;
  }
  return undefined;
}
