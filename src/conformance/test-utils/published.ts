import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Marks a published declaration block in README.md or a docs/ page. */
export const DECLARATION_MARKER = '<!-- conformance-declaration -->';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The page that publishes the declaration of the current version. */
export const DECLARATION_PAGE = 'docs/conformance.md';

/**
 * Every declaration published in README.md and docs/*.md: the ```json block after each
 * marker. Returns `[file, parsed JSON]` pairs.
 */
export function publishedDeclarations(): [string, unknown][] {
  const out: [string, unknown][] = [];
  const docs = existsSync(`${ROOT}docs`)
    ? readdirSync(`${ROOT}docs`)
        .filter((f) => f.endsWith('.md'))
        .sort()
        .map((f) => `docs/${f}`)
    : [];
  for (const file of ['README.md', ...docs]) {
    const path = `${ROOT}${file}`;
    if (!existsSync(path)) continue;
    const text = readFileSync(path, 'utf8');
    let at = text.indexOf(DECLARATION_MARKER);
    while (at >= 0) {
      const block = /```json\n([\s\S]*?)\n```/.exec(text.slice(at));
      if (!block) throw new Error(`${file}: no json block after the declaration marker`);
      out.push([file, JSON.parse(block[1]!)]);
      at = text.indexOf(DECLARATION_MARKER, at + DECLARATION_MARKER.length);
    }
  }
  return out;
}
