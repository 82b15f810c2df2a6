#!/usr/bin/env node

// A reader that stops early (`contextfold … | head`) closes the pipe: that ends the output, it is
// not an error worth a stack trace.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

const argv = process.argv.slice(2);

async function run(): Promise<number> {
  // Claude Code starts `contextfold hook …` on every prompt: a running hook server answers it
  // without this process loading the CLI and the engine (hook-client.ts).
  if (argv.includes('hook')) {
    const viaServer = await (await import('./hook-client.js')).hookViaServer(argv);
    if (viaServer !== null) return viaServer;
  }
  const { main } = await import('./main.js');
  return main(argv);
}

run().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`contextfold: internal error: ${e instanceof Error ? e.stack : e}\n`);
    process.exitCode = 70;
  },
);
