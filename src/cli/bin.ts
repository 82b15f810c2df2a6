#!/usr/bin/env node
import { main } from './main.js';

// A reader that stops early (`contextfold … | head`) closes the pipe: that ends the output, it is
// not an error worth a stack trace.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`contextfold: internal error: ${e instanceof Error ? e.stack : e}\n`);
    process.exitCode = 70;
  },
);
