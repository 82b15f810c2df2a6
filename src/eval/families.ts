import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Session families the eval reports on, by the data manifest's `format`. */
const FAMILY_OF_FORMAT: Readonly<Record<string, string>> = {
  claude_code_jsonl: 'claude-code',
  claude_console: 'claude-code',
  cline: 'cline',
  aider: 'aider',
  swe_agent: 'swe-agent',
};

/**
 * The family (agent) of each trajectory, from `manifest.json` beside the trajectories directory
 * (`<dir>/../manifest.json`, entries `{ turns_file, format }`). A trajectory the manifest does
 * not list, or no manifest at all, is `other`: families only group figures, they never change
 * what is measured.
 *
 * @example
 * familiesOf('../shared/data/trajectories').get('palimondo_BookMinder_day-003'); // 'claude-code'
 */
export function familiesOf(trajectoriesDir: string): Map<string, string> {
  const out = new Map<string, string>();
  const path = join(dirname(trajectoriesDir.replace(/[/\\]+$/u, '')), 'manifest.json');
  if (!existsSync(path)) return out;
  let manifest: unknown;
  try {
    manifest = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return out;
  }
  const list = (manifest as { trajectories?: unknown }).trajectories;
  if (!Array.isArray(list)) return out;
  for (const t of list) {
    const file = (t as { turns_file?: unknown }).turns_file;
    const format = (t as { format?: unknown }).format;
    if (typeof file !== 'string' || typeof format !== 'string') continue;
    out.set(file.replace(/\.jsonl$/u, ''), FAMILY_OF_FORMAT[format] ?? format);
  }
  return out;
}

/** The family of one trajectory (`other` when unknown). */
export function familyOf(families: ReadonlyMap<string, string>, trajectory: string): string {
  return families.get(trajectory) ?? 'other';
}
