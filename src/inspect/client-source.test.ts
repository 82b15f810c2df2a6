import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLIENT = fileURLToPath(new URL('./client/', import.meta.url));
const STATIC = fileURLToPath(new URL('./static/', import.meta.url));

describe('the browser client never builds HTML from strings', () => {
  it('has no HTML sinks, no eval, no external URL', () => {
    const files = readdirSync(CLIENT).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      const src = readFileSync(`${CLIENT}${f}`, 'utf8');
      for (const sink of [
        'innerHTML',
        'outerHTML',
        'insertAdjacentHTML',
        'document.write',
        'eval(',
        'new Function',
        'javascript:',
        'http://',
        'https://',
      ]) {
        expect(src.includes(sink), `${f} uses ${sink}`).toBe(false);
      }
    }
  });

  it('the page loads only files that ship with it', () => {
    const html = readFileSync(`${STATIC}index.html`, 'utf8');
    const refs = [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(refs.filter((r) => !r.startsWith('#'))).toEqual([
      'favicon.svg',
      'style.css',
      'js/client/main.js',
    ]);
    expect(html).not.toMatch(/<script>|<style>|\sstyle="|\son[a-z]+="/i);
  });
});
