// Loaded with `node --import` into the CLI processes of the MCP and hook subjects during the
// mutation tests: wraps the built engine with the mutant named by CONTEXTFOLD_TEST_MUTANT.
// The CLI runs from its bundle (scripts/bundle-cli.mjs), which holds its own copy of the
// engine class in a chunk: that copy is wrapped too (the same module instance the CLI imports).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ContextFold } from '../../../dist/engine/context-fold.js';
import { installEngineMutant } from './engine-mutants.mjs';

const mutant = process.env.CONTEXTFOLD_TEST_MUTANT;
installEngineMutant(ContextFold, mutant);

const cli = fileURLToPath(new URL('../../../dist/cli/', import.meta.url));
for (const f of readdirSync(cli)) {
  if (
    !/^bin-.+\.js$/.test(f) ||
    !readFileSync(join(cli, f), 'utf8').includes('class ContextFold ')
  ) {
    continue;
  }
  const chunk = await import(pathToFileURL(join(cli, f)).href);
  const bundled = Object.values(chunk).find(
    (v) => typeof v === 'function' && v.name === 'ContextFold',
  );
  if (!bundled) throw new Error(`mutant-preload: ${f} defines ContextFold but does not export it`);
  installEngineMutant(bundled, mutant);
}
