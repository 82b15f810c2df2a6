import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from './loopback.js';

describe('isLoopbackHost', () => {
  it('only loopback hosts count as loopback', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '0:0:0:0:0:0:0:1']) {
      expect(isLoopbackHost(h), h).toBe(true);
    }
    const remote = ['0.0.0.0', '::', '192.168.1.5', '10.0.0.1', 'example.com', '128.0.0.1'];
    // Names that only look like a loopback address resolve anywhere.
    const lookalikes = ['127.example.com', '127.0.0.1.nip.io', '127.0.0.1x', 'localhost.evil.test'];
    for (const h of [...remote, ...lookalikes]) expect(isLoopbackHost(h), h).toBe(false);
  });
});
