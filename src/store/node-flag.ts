/**
 * A node's `sanitized` flag (redacted before write), by the artifact hash that names the node's
 * exact canonical content, flag included: a recorded flag never goes stale, and a file changed
 * behind the engine's back has another artifact hash, which verification catches.
 */
export interface NodeFlag {
  artifact_sha256: string;
  sanitized: boolean;
}

/** Index entries by their node's recorded `sanitized` flag (`unknown`: not recorded yet). */
export interface FlagCounts {
  sanitized: number;
  unsanitized: number;
  unknown: number;
}

/** The flags a commit knows (each fold's node as written), for the backend to record. */
export function commitFlags(
  rows: readonly { entry: { artifact_sha256: string }; sanitized?: boolean }[],
): NodeFlag[] {
  return rows.flatMap((r) =>
    r.sanitized === undefined
      ? []
      : [{ artifact_sha256: r.entry.artifact_sha256, sanitized: r.sanitized }],
  );
}
