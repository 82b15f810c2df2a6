import { describe, expect, it } from 'vitest';
import { connectionListed, upstreamHeaders } from './headers.js';

describe('upstreamHeaders', () => {
  it('forwards the client’s headers, auth included, without hop-by-hop ones', () => {
    const out = upstreamHeaders(
      new Headers({
        'x-api-key': 'sk-ant-x',
        'anthropic-version': '2023-06-01',
        connection: 'keep-alive',
        'transfer-encoding': 'chunked',
        'x-contextfold-session': 's1',
      }),
    );
    expect(out).toEqual({ 'x-api-key': 'sk-ant-x', 'anthropic-version': '2023-06-01' });
  });

  it('drops the headers the Connection header names (RFC 9110 §7.6.1)', () => {
    // Before, `x-hop-secret` reached the upstream on model calls and on passthrough.
    const out = upstreamHeaders(
      new Headers({
        connection: 'keep-alive, X-Hop-Secret',
        'x-hop-secret': 'for the next hop only',
        'x-api-key': 'sk-ant-x',
      }),
    );
    expect(out).toEqual({ 'x-api-key': 'sk-ant-x' });
  });
});

describe('connectionListed', () => {
  it('reads a comma-separated list in any case and spacing', () => {
    expect([...connectionListed(' Keep-Alive ,X-A,, x-b ')]).toEqual(['keep-alive', 'x-a', 'x-b']);
    expect(connectionListed(null).size).toBe(0);
  });
});
