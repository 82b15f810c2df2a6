// Loaded with `node --import` into the CLI processes of the MCP and hook subjects during the
// mutation tests: wraps the built engine with the mutant named by CONTEXTFOLD_TEST_MUTANT.
import { ContextFold } from '../../../dist/engine/context-fold.js';
import { installEngineMutant } from './engine-mutants.mjs';

installEngineMutant(ContextFold, process.env.CONTEXTFOLD_TEST_MUTANT);
