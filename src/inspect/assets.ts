import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { packagePath } from '../fs/package-root.js';
import { UsageError } from '../protocol/errors.js';

/** One static file of the web app, held in memory. */
export interface Asset {
  body: Buffer;
  type: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** Where the built web app lives: `dist/inspect/static/` of the package. */
export function defaultAssetsDir(): string {
  return packagePath('dist', 'inspect', 'static') + sep;
}

/**
 * Loads the web app's files (HTML, the compiled client, CSS) into memory, keyed by their path
 * under the assets directory (`index.html`, `js/client/main.js`, …). Only these paths are ever
 * served. Throws a one-line error if the app was not built.
 */
export function loadAssets(dir = defaultAssetsDir()): Map<string, Asset> {
  if (!existsSync(join(dir, 'index.html')) || !existsSync(join(dir, 'js', 'client', 'main.js'))) {
    throw new UsageError(
      `the inspector's web app is not built (${dir} lacks index.html or js/client/main.js): run npm run build`,
      { path: dir },
    );
  }
  const out = new Map<string, Asset>();
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const type = TYPES[extname(name)];
    if (!type) continue; // source maps, declarations: not served
    const path = join(dir, name);
    out.set(relative(dir, path).split(sep).join('/'), { body: readFileSync(path), type });
  }
  return out;
}
