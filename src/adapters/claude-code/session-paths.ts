import { join } from 'node:path';

/** Where the hook keeps one Claude Code session: its IPCF store and its ingestion state. */
export interface SessionPaths {
  /** The session's own store (step ids are positions in that session's transcript). */
  storeDir: string;
  /** What has been read from the transcript so far. */
  statePath: string;
}

/**
 * Paths for a session under a base directory: `<base>/claude-code/<session_id>/` is the store,
 * `<base>/claude-code/<session_id>.state.json` the ingestion state. One store per session,
 * because step ids are positions in one conversation and two sessions would collide.
 *
 * @example
 * sessionPaths('/repo/.contextfold', 'abc'); // { storeDir: '/repo/.contextfold/claude-code/abc', ... }
 */
export function sessionPaths(baseDir: string, sessionId: string): SessionPaths {
  const root = join(baseDir, 'claude-code');
  return { storeDir: join(root, sessionId), statePath: join(root, `${sessionId}.state.json`) };
}
