import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

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

/** How long the redirect page of {@link openBrowserPrivately} is kept for the browser to read. */
export const REDIRECT_PAGE_MS = 60_000;

const attr = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Opens a URL that carries a secret (the inspector's token) without putting it on a command
 * line, where `ps` shows it to every local user: the opener is handed a redirect page instead,
 * written to a fresh private directory (0700; the file 0600, readable by this user only), which
 * sends the browser on to `url`. The page is removed after {@link REDIRECT_PAGE_MS}, or by
 * `remove` (call it on exit). Resolves `opened` as {@link openBrowser} does; never throws.
 *
 * @example
 * const { remove } = await openBrowserPrivately(inspector.url);
 * // … on exit:
 * remove();
 */
export async function openBrowserPrivately(
  url: string,
  opener: { command: string; args: string[] } = browserCommand(),
): Promise<{ opened: boolean; remove: () => void }> {
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), 'contextfold-open-'));
    writeFileSync(
      join(dir, 'open.html'),
      `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${attr(url)}"><title>contextfold inspect</title><p>Opening the inspector…</p>\n`,
      { mode: 0o600, flag: 'wx' },
    );
  } catch {
    return { opened: false, remove: () => {} };
  }
  const remove = (): void => {
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  const timer = setTimeout(remove, REDIRECT_PAGE_MS);
  timer.unref();
  const opened = await openBrowser(pathToFileURL(join(dir, 'open.html')).href, opener);
  if (!opened) remove();
  return { opened, remove };
}
