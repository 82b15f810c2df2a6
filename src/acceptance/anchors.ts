import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { packageRoot } from '../fs/package-root.js';
import type { SourceAnchor } from './case-schema.js';

/** The package root (where `src/`, `dist/` and `conformance/` live). */
export const PACKAGE_ROOT = packageRoot() + sep;

/** Where anchors are looked up. */
export interface AnchorContext {
  /** Package root; default {@link PACKAGE_ROOT}. */
  root?: string;
  /**
   * A directory holding the specification texts (each file names its `Document ID:`). Without
   * it, spec anchors cannot be checked and are reported as unchecked, never as holding.
   */
  specDir?: string | null;
}

/** An anchor's state: it holds, it no longer holds (the case fails), or it could not be checked. */
export type AnchorState =
  | { state: 'holds' }
  | { state: 'broken'; reason: string }
  | { state: 'unchecked'; reason: string };

/**
 * Whitespace-insensitive, and blind to comment continuation: a marker quoted from a doc comment
 * matches across its line breaks (` * `, `// `, `# ` at the start of a line).
 */
const squash = (s: string) =>
  s
    .replace(/\n[ \t]*(?:\*(?!\/)|\/\/|#)?/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

const specCache = new Map<string, Map<string, string[]>>();

/** The spec texts of a directory by their `Document ID:`, each as whitespace-squashed lines. */
function specDocuments(dir: string): Map<string, string[]> {
  let docs = specCache.get(dir);
  if (docs) return docs;
  docs = new Map();
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    const text = readFileSync(path, 'utf8');
    const id = /Document ID:\s*([A-Z0-9-]+)/.exec(text)?.[1];
    if (id && !docs.has(id)) docs.set(id, text.split('\n').map(squash));
  }
  specCache.set(dir, docs);
  return docs;
}

function checkSpec(a: Extract<SourceAnchor, { surface: 'spec' }>, dir: string): AnchorState {
  const lines = specDocuments(dir).get(a.document);
  if (!lines) return { state: 'broken', reason: `${a.document} is not in ${dir}` };
  const marker = squash(a.marker);
  const conf = /^CONF-\d{2}$/.test(a.clause);
  const found = lines.some((l) => l.includes(marker) && (!conf || l.includes(a.clause)));
  if (found) return { state: 'holds' };
  const where = conf ? ` on the line of ${a.clause}` : '';
  return { state: 'broken', reason: `${a.document} no longer says "${a.marker}"${where}` };
}

function checkFile(a: Extract<SourceAnchor, { surface: 'code' | 'protocol' }>, root: string) {
  let path = join(root, a.path);
  // An installed package ships dist/ (comments and strings kept by tsc), not src/.
  if (!existsSync(path) && a.path.startsWith('src/') && a.path.endsWith('.ts')) {
    path = join(root, `dist/${a.path.slice(4, -3)}.js`);
  }
  if (!existsSync(path)) return { state: 'broken' as const, reason: `${a.path} does not exist` };
  const text = readFileSync(path, 'utf8');
  if (squash(text).includes(squash(a.marker))) return { state: 'holds' as const };
  return { state: 'broken' as const, reason: `${a.path} no longer contains "${a.marker}"` };
}

/**
 * Checks that a case's source anchor still holds: the named file (or specification document)
 * exists and contains the marker text (whitespace-insensitive; for a CONF clause, on that
 * requirement's line). A case whose anchor broke fails: the code or text it was derived from
 * changed, and the case must be updated deliberately.
 *
 * @example
 * checkAnchor({ surface: 'code', path: 'src/harness/session-core.ts', marker: 'CONF-07' }); // { state: 'holds' }
 */
export function checkAnchor(a: SourceAnchor, ctx: AnchorContext = {}): AnchorState {
  if (a.surface !== 'spec') return checkFile(a, ctx.root ?? PACKAGE_ROOT);
  if (!ctx.specDir) {
    return { state: 'unchecked', reason: `no specification directory to read ${a.document} from` };
  }
  return checkSpec(a, ctx.specDir);
}
