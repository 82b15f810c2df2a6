import { describe, expect, it } from 'vitest';
import { browserCommand, openBrowser } from './open-browser.js';

describe('openBrowser', () => {
  it('picks the platform opener', () => {
    expect(browserCommand('linux').command).toBe('xdg-open');
    expect(browserCommand('darwin').command).toBe('open');
    expect(browserCommand('win32').command).toBe('cmd');
  });

  it('resolves false, quietly, when the opener is missing', async () => {
    await expect(
      openBrowser('http://127.0.0.1:1/', { command: 'contextfold-no-such-opener', args: [] }),
    ).resolves.toBe(false);
  });

  it('resolves true when the opener starts (it receives the URL)', async () => {
    await expect(openBrowser('http://127.0.0.1:1/', { command: 'true', args: [] })).resolves.toBe(
      true,
    );
  });
});
