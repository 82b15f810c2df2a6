import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A fresh random URL token (256 bits, base64url). It is never hashed into anything or
 * replayed, so randomness is fine here; it only keeps other local users and web pages out.
 */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Compares a presented token with the real one in constant time (both are hashed first, so
 * neither the content nor the length leaks through timing).
 *
 * @example
 * tokenMatches(token, token); // true
 */
export function tokenMatches(presented: string, token: string): boolean {
  return timingSafeEqual(digest(presented), digest(token));
}

/**
 * Headers on every response: a Content-Security-Policy that allows only the inspector's own
 * script, style and API (no inline script, no external load, no framing), no MIME sniffing, no
 * referrer (the URL carries the token), and no caching of archived content.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'none'; object-src 'none'; media-src 'none'; frame-src 'none'; worker-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};
