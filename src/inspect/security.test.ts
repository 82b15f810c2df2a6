import { describe, expect, it } from 'vitest';
import { newToken, SECURITY_HEADERS, tokenMatches } from './security.js';

describe('inspector security helpers', () => {
  it('tokens are 256-bit base64url and differ each time', () => {
    const a = newToken();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newToken()).not.toBe(a);
  });

  it('a token matches only itself (prefix, suffix, case and empty all fail)', () => {
    const t = newToken();
    expect(tokenMatches(t, t)).toBe(true);
    for (const bad of ['', t.slice(0, -1), `${t}x`, t.toUpperCase(), `x${t.slice(1)}`]) {
      if (bad !== t) expect(tokenMatches(bad, t)).toBe(false);
    }
  });

  it('the CSP forbids inline script and any load from elsewhere', () => {
    const csp = SECURITY_HEADERS['Content-Security-Policy']!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/https?:|data:|\*/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(SECURITY_HEADERS['X-Content-Type-Options']).toBe('nosniff');
    expect(SECURITY_HEADERS['Referrer-Policy']).toBe('no-referrer');
  });
});
