import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../test-utils/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const tmp = tempDir('cf-pack-');
afterAll(() => tmp.cleanup());

describe('the package ships the web app', () => {
  it('npm pack includes every file the inspector serves (the build produced them)', () => {
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        npm_config_cache: join(tmp.dir, 'npm-cache'),
        npm_config_logs_max: '0',
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const packed = new Set(
      (JSON.parse(out.toString('utf8')) as { files: { path: string }[] }[])[0]!.files.map(
        (f) => f.path,
      ),
    );
    const staticDir = join(ROOT, 'dist', 'inspect', 'static');
    const built = readdirSync(staticDir, { recursive: true, encoding: 'utf8' })
      .map((f) => relative(ROOT, join(staticDir, f)).split(sep).join('/'))
      .filter((f) => /\.(html|css|js|svg)$/.test(f));
    for (const f of [
      'dist/inspect/static/index.html',
      'dist/inspect/static/style.css',
      'dist/inspect/static/favicon.svg',
      'dist/inspect/static/js/client/main.js',
      'dist/inspect/index.js',
    ]) {
      expect(packed.has(f), f).toBe(true);
    }
    for (const f of built) expect(packed.has(f), f).toBe(true);
  });
});
