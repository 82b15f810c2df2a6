import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fakeSecrets } from '../test-utils/fake-secrets.js';

const REDACTOR = fileURLToPath(new URL('../../dist/guard/redactor.js', import.meta.url));

// A resolve hook (on the loader thread) reports every module the child loads, so the child can
// say whether secretlint was loaded by what it redacted.
const HOOK = `data:text/javascript,${encodeURIComponent(
  'let port; export function initialize(d) { port = d.port; } ' +
    'export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }',
)}`;

function loadsSecretlint(text: string): { loaded: boolean; redacted: string } {
  const script = `
    import { register } from 'node:module';
    import { MessageChannel } from 'node:worker_threads';
    const { port1, port2 } = new MessageChannel();
    const urls = [];
    port1.on('message', (u) => urls.push(u));
    register(${JSON.stringify(HOOK)}, { data: { port: port2 }, transferList: [port2] });
    const { Redactor } = await import(${JSON.stringify(REDACTOR)});
    const r = await new Redactor().redactText(${JSON.stringify(text)});
    await new Promise((res) => setTimeout(res, 50));
    port1.close();
    console.log(JSON.stringify({ loaded: urls.some((u) => u.includes('/@secretlint/core/')), redacted: r.text }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe('secretlint loads on first use', () => {
  it('a text no secretlint trigger matches is redacted without loading it', () => {
    const r = loadsSecretlint('npm test -- lexer: 161 tests passed (reports/lexer/pass-0023.xml)');
    expect(r).toEqual({
      loaded: false,
      redacted: 'npm test -- lexer: 161 tests passed (reports/lexer/pass-0023.xml)',
    });
  });

  it('a text with a token a secretlint rule finds loads it, and the token is gone', () => {
    const token = fakeSecrets().githubToken;
    const r = loadsSecretlint(`export GH=${token}`);
    expect(r.loaded).toBe(true);
    expect(r.redacted).not.toContain(token);
  });
});
