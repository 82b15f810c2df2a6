// Bundles the compiled CLI (dist/cli/bin.js, written by tsc) into a few files in dist/cli/:
// `bin.js` and one chunk per lazily loaded command. Every `contextfold` run is a fresh process,
// and loading some ninety ES modules one by one costs it about 40 ms; a chunk costs one.
// npm packages stay external (they load from node_modules as before), and files that ship with
// the package are found from its root (src/fs/package-root.ts), not from a module's own URL.
// Run after tsc (`npm run build` does): bin.js is then tsc's again.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BANNER = '// contextfold CLI bundle (scripts/bundle-cli.mjs)';
const dir = fileURLToPath(new URL('../dist/cli/', import.meta.url));
const entry = join(dir, 'bin.js');

if (readFileSync(entry, 'utf8').includes(BANNER)) {
  // Already bundled since tsc last wrote bin.js: bundling the bundle would drop its chunks.
  process.exit(0);
}
for (const f of readdirSync(dir)) if (/^bin-.+\.js$/.test(f)) rmSync(join(dir, f));

// The bundle only saves start-up time: where the bundler cannot load (a platform without its
// native binding), tsc's modules run as they are, and the build says so.
let rolldown;
try {
  ({ rolldown } = await import('rolldown'));
} catch (e) {
  console.warn(`bundle-cli: rolldown is not usable here (${e.message}); the CLI runs unbundled`);
  process.exit(0);
}

const bundle = await rolldown({
  input: entry,
  platform: 'node',
  // Bare specifiers (npm packages, node: built-ins) are loaded at run time, never inlined.
  external: [/^[^./]/],
  logLevel: 'warn',
});
await bundle.write({
  dir,
  format: 'esm',
  entryFileNames: 'bin.js',
  chunkFileNames: 'bin-[name]-[hash].js',
  banner: BANNER,
});
await bundle.close();
