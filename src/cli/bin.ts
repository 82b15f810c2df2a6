#!/usr/bin/env node
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`contextfold: internal error: ${e instanceof Error ? e.stack : e}\n`);
    process.exitCode = 70;
  },
);
