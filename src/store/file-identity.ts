import { statSync } from 'node:fs';

/**
 * What identifies one version of a file without reading it: inode, size and the nanosecond
 * modification and change times. A rewrite in place, a rename over it, a truncation or an append
 * changes at least one of them (see {@link isRacy} for the one exception).
 */
export interface FileIdentity {
  ino: string;
  size: number;
  mtimeNs: string;
  ctimeNs: string;
}

/** The identity of a file, or null if it does not exist. */
export function fileIdentity(path: string): FileIdentity | null {
  // Not an exception for an absent file: a scan asks about files that are usually absent (the
  // journal, the eviction log), and a thrown error per scan was a visible part of a warm scan.
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (st === undefined) return null;
  return {
    ino: String(st.ino),
    size: Number(st.size),
    mtimeNs: String(st.mtimeNs),
    ctimeNs: String(st.ctimeNs),
  };
}

/** True if both name the same version of a file (or both say "absent"). */
export function sameIdentity(a: FileIdentity | null, b: FileIdentity | null): boolean {
  if (a === null || b === null) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** Timestamps closer to "now" than this may not yet tell two versions apart (coarse clocks). */
const RACY_NS = 100_000_000n;

/**
 * True while a file's identity alone cannot prove it unchanged: on file systems with coarse
 * timestamps, a same-size rewrite within one clock tick of the recorded version keeps every
 * field. Until the recorded mtime is older than the racy window, compare content (as git does).
 */
export function isRacy(id: FileIdentity, nowMs: number = Date.now()): boolean {
  return BigInt(Math.floor(nowMs)) * 1_000_000n - BigInt(id.mtimeNs) < RACY_NS;
}
