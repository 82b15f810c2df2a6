import { readFileSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { LibrarySubject } from '../library-subject.js';
import type { SubjectRequest, SubjectResponse } from '../types.js';

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

/** Renames one error name everywhere a response carries it (errors, validate problems, refusals). */
function rename(r: SubjectResponse, from: string, to: string): SubjectResponse {
  if (!r.ok) return r.error.name === from ? { ...r, error: { ...r.error, name: to } } : r;
  const swap = (xs: unknown) =>
    Array.isArray(xs)
      ? xs.map((x: { error?: string }) => (x.error === from ? { ...x, error: to } : x))
      : xs;
  const result = { ...r.result };
  if ('problems' in result) result.problems = swap(result.problems);
  if ('refused' in result) result.refused = swap(result.refused);
  return { ...r, result };
}

/** The library without its declared strictness (it claims to be exactly the floor). */
export class UndeclaredSubject extends LibrarySubject {
  protected override async hello(): Promise<Result> {
    return { ...(await super.hello()), strictnesses: [] };
  }
}

/**
 * The reference engine's choice for a symlink inside the store: the node fails verification, so
 * the refusal is named `IntegrityCheckError`, never `PathContainmentError`.
 */
export class IntegrityNamedSubject extends LibrarySubject {
  override async request(req: SubjectRequest): Promise<SubjectResponse> {
    return rename(await super.request(req), 'PathContainmentError', 'IntegrityCheckError');
  }
}

/** The reference engine's choice for a truncated index: a JSON decode error escapes untyped. */
export class UntypedIndexErrorSubject extends LibrarySubject {
  override async request(req: SubjectRequest): Promise<SubjectResponse> {
    return rename(await super.request(req), 'IntegrityCheckError', 'JSONDecodeError');
  }
}

/** The reference engine has no per-call `max_tokens`: only the policy cap bounds a hydrate. */
export class NoMaxTokensSubject extends LibrarySubject {
  protected override async hydrate(p: Params): Promise<Result> {
    const { max_tokens: _ignored, ...rest } = p;
    return super.hydrate(rest);
  }
}

/**
 * The reference engine resolves an index `file_path` before comparing it with the canonical
 * path, so `cold_nodes/../cold_nodes/step_000137.json` is the node itself. Emulated by resolving
 * every `file_path` of the (compacted) index when the store is opened; claims no strictness.
 */
export class ResolvesDotdotSubject extends UndeclaredSubject {
  protected override async open(p: Params): Promise<Result> {
    const index = join(p.dir as string, 'recall_index.json');
    try {
      const doc = JSON.parse(readFileSync(index, 'utf8')) as {
        nodes: Record<string, { file_path: string }>;
      };
      for (const e of Object.values(doc.nodes)) e.file_path = posix.normalize(e.file_path);
      writeFileSync(index, JSON.stringify(doc, null, 2));
    } catch {
      // No index yet (the first open of a case): nothing to resolve.
    }
    return super.open(p);
  }
}
