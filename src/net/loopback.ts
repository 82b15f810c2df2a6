import { isIP } from 'node:net';

/**
 * True for a loopback host: `localhost`, any `127.0.0.0/8` address, `::1` (bracketed or not).
 * Anything else, a name that merely starts with `127.` included, is reachable from other
 * machines: the proxy and the inspector warn about it or ask for an explicit opt-in.
 *
 * @example
 * isLoopbackHost('127.0.0.1'); // true
 * isLoopbackHost('[::1]'); // true
 * isLoopbackHost('127.example.com'); // false
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.split('.')[0] === '127';
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1';
  return false;
}
