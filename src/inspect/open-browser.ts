import { spawn } from 'node:child_process';

/**
 * The command that opens a URL in the desktop's browser on this platform.
 *
 * @example
 * browserCommand('darwin'); // { command: 'open', args: [] }
 */
export function browserCommand(platform: NodeJS.Platform = process.platform): {
  command: string;
  args: string[];
} {
  if (platform === 'darwin') return { command: 'open', args: [] };
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""'] };
  return { command: 'xdg-open', args: [] };
}

/**
 * Tries to open a URL in a browser, quietly: resolves true if the opener started, false if it is
 * missing or failed. Never throws (a headless machine simply has no browser to open).
 *
 * @example
 * await openBrowser(inspector.url);
 */
export function openBrowser(
  url: string,
  opener: { command: string; args: string[] } = browserCommand(),
): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      const child = spawn(opener.command, [...opener.args, url], {
        stdio: 'ignore',
        detached: true,
      });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}
