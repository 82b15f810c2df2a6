import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Builds dist/ once before any test file runs, so tests that spawn the real CLI
 * (`node dist/cli/bin.js`) always run the code under test. A type error fails the run.
 */
export default function setup(): void {
  if (process.env.CONTEXTFOLD_SKIP_BUILD === '1') return;
  const root = fileURLToPath(new URL('../../', import.meta.url));
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
