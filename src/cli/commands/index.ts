import type { Command } from 'commander';

/** A CLI command module registers itself on the program. */
export type Register = (program: Command) => void;

/** What a command module exports. */
export interface CommandModule {
  register: Register;
}

/** A command of the CLI: what `contextfold --help` lists for it, and how to load it. */
export interface CommandEntry {
  name: string;
  /** Its line's left column in `contextfold --help`, as commander prints it (a test checks). */
  term: string;
  /** Its description (set on the command when the module is registered). */
  about: string;
  load: () => Promise<CommandModule>;
}

/**
 * Every command the CLI has, loaded lazily: a run imports only the module of the command it
 * executes, and `contextfold --help` lists them from this table without loading any (a module
 * imports the engine, 80–300 ms each).
 */
export const commandTable: CommandEntry[] = [
  // core engine
  {
    name: 'fold',
    term: 'fold [options] [STEP] [SUMMARY]',
    about: 'fold a turn (or a JSONL batch) into cold storage',
    load: () => import('./fold.js'),
  },
  {
    name: 'scan',
    term: 'scan [options] [PROMPT]',
    about: 'software MMU: which archived steps a prompt would page in (CONF-13)',
    load: () => import('./scan.js'),
  },
  {
    name: 'recall',
    term: 'recall [options] [QUERY]',
    about: 'explicit recall: chronological candidates with coverage tiers (CONF-04)',
    load: () => import('./recall.js'),
  },
  {
    name: 'hydrate',
    term: 'hydrate [options] <STEP>',
    about: 'verified, bounded page-in of one archived step (CONF-05/06/09)',
    load: () => import('./hydrate.js'),
  },
  {
    name: 'evict',
    term: 'evict <STEP>',
    about: 'record that a paged-in step left the prompt (CONF-07)',
    load: () => import('./evict.js'),
  },
  {
    name: 'status',
    term: 'status',
    about: 'summary of the store',
    load: () => import('./status.js'),
  },
  {
    name: 'validate',
    term: 'validate',
    about:
      'integrity scan: hashes, orphans, broken references, path containment (exit 1 on problems)',
    load: () => import('./validate.js'),
  },
  {
    name: 'compact',
    term: 'compact',
    about: 'fold the index journal into recall_index.json (the exact reference layout)',
    load: () => import('./compact.js'),
  },
  {
    name: 'reindex',
    term: 'reindex',
    about:
      'rebuild the derived index (index-<n>-<tag>.sqlite) from the store files and analyse every node',
    load: () => import('./reindex.js'),
  },
  {
    name: 'repair',
    term: 'repair [options]',
    about:
      'plan (or with --apply do) the repair of what validate reports: re-index verified orphans, quarantine tampered files, drop dangling entries',
    load: () => import('./repair.js'),
  },
  {
    name: 'export',
    term: 'export [options]',
    about:
      'write the store (e.g. a postgres:// one) to a directory in the reference layout, every node verified',
    load: () => import('./export.js'),
  },
  {
    name: 'import-store',
    term: 'import-store <DIR>',
    about:
      'load a store directory (reference layout) into --store (e.g. postgres://…), verifying every node',
    load: () => import('./import-store.js'),
  },
  {
    name: 'demo',
    term: 'demo [options]',
    about:
      'a 500-turn session in a temporary store: raw history vs prompt tokens, verified page-in, eviction, tamper detection',
    load: () => import('./demo.js'),
  },
  // harness
  {
    name: 'session',
    term: 'session [options] <TURNS>',
    about:
      'replay a turns JSONL through a harness session: fold, page in, evict, one pack per prompt',
    load: () => import('./session.js'),
  },
  {
    name: 'pack',
    term: 'pack [options]',
    about: 'print one context pack of the recorded session, as it would be sent (read-only)',
    load: () => import('./pack.js'),
  },
  {
    name: 'inspect',
    term: 'inspect [options]',
    about: 'serve a read-only web view of the store: folds, packs, page-ins, nodes (CONF-08)',
    load: () => import('./inspect.js'),
  },
  // integrations
  {
    name: 'import',
    term: 'import [options] <FILE>',
    about: 'import a conversation history (transcript or message array) into the store',
    load: () => import('./import.js'),
  },
  {
    name: 'mcp',
    term: 'mcp [options]',
    about:
      'serve the store to an MCP client over stdio (recall, hydrate, scan, fold, status, validate)',
    load: () => import('./mcp.js'),
  },
  {
    name: 'hook',
    term: 'hook [options] <EVENT>',
    about:
      'Claude Code hook: ingest the transcript and page archived turns back in (run by Claude Code)',
    load: () => import('./hook.js'),
  },
  {
    name: 'install',
    term: 'install [options] <TARGET>',
    about: 'install an integration; claude-code merges the contextfold hooks into settings.json',
    load: () => import('./install.js'),
  },
  {
    name: 'uninstall',
    term: 'uninstall [options] <TARGET>',
    about: 'remove an integration; claude-code takes the contextfold hooks out of settings.json',
    load: () => import('./uninstall.js'),
  },
  {
    name: 'proxy',
    term: 'proxy [options]',
    about:
      'run an HTTP proxy in front of the Anthropic / OpenAI API that folds every call of any client',
    load: () => import('./proxy.js'),
  },
  // conformance and evaluation
  {
    name: 'conformance',
    term: 'conformance [options]',
    about:
      'run the IPCF-1.1 conformance corpus against a subject (default: this library, in-process) and print the verdict table or, with --json, the declaration',
    load: () => import('./conformance.js'),
  },
  {
    name: 'guard',
    term: 'guard',
    about: 'secret, injection and active-content tables: scan a text, run the guard corpus',
    load: () => import('./guard.js'),
  },
  {
    name: 'subject',
    term: 'subject',
    about:
      'serve the conformance subject protocol (ipcf-subject/1, conformance/PROTOCOL.md): one JSON request per stdin line, one JSON response per stdout line',
    load: () => import('./subject.js'),
  },
  {
    name: 'eval',
    term: 'eval [options]',
    about:
      'retrieval eval (eval/README.md): fold real sessions, ask the questions, score what is paged in',
    load: () => import('./eval.js'),
  },
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
