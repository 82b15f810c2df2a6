import type { Command } from 'commander';
import { register as compact } from './compact.js';
import { register as conformance } from './conformance.js';
import { register as demo } from './demo.js';
import { register as evalCmd } from './eval.js';
import { register as evict } from './evict.js';
import { register as fold } from './fold.js';
import { register as hook } from './hook.js';
import { register as hydrate } from './hydrate.js';
import { register as importCmd } from './import.js';
import { register as install } from './install.js';
import { register as mcp } from './mcp.js';
import { register as recall } from './recall.js';
import { register as scan } from './scan.js';
import { register as status } from './status.js';
import { register as subject } from './subject.js';
import { register as validate } from './validate.js';

/** A CLI command module registers itself on the program. */
export type Register = (program: Command) => void;

/**
 * Every command the CLI has. One line per command module; keep alphabetical within groups.
 * (Helpers add their commands here.)
 */
export const commands: Register[] = [
  // core engine
  fold,
  scan,
  recall,
  hydrate,
  evict,
  status,
  validate,
  compact,
  demo,
  // harness, conformance, integrations, eval (added below by their owners)
  importCmd,
  conformance,
  subject,
  mcp,
  hook,
  install,
  evalCmd,
];
