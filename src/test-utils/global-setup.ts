import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Builds dist/ once before any test file runs (the same steps as `npm run build`: the library,
 * the inspector's browser client, its static files), so tests that spawn the real CLI
 * (`node dist/cli/bin.js`) or load the web app always run the code under test. A type error
 * fails the run.
 */
export default function setup(): void {
  if (process.env.CONTEXTFOLD_SKIP_BUILD === '1') return;
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const tsc = 'node_modules/typescript/bin/tsc';
  const run = (args: string[]): void => {
    execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  };
  run([tsc, '-p', 'tsconfig.build.json']);
  run([tsc, '-p', 'src/inspect/client/tsconfig.json']);
  run(['scripts/copy-inspect-static.mjs']);
}
