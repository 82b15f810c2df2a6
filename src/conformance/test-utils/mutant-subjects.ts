import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hydratedPage } from '../../engine/hydrated-page.js';
import type { HydrateResult, ScanPick } from '../../engine/types.js';
import { ipcfErrorName, isContextFoldError } from '../../protocol/errors.js';
import { perTurnCap } from '../../protocol/policy.js';
import { LibrarySubject } from '../library-subject.js';

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

function nodePath(dir: string, step: number): string {
  return join(dir, 'cold_nodes', `step_${String(step).padStart(6, '0')}.json`);
}

/** Reads a node file straight off the disk, trusting whatever it says (what a broken engine does). */
function rawHydrate(dir: string, step: number): Result {
  const node = JSON.parse(readFileSync(nodePath(dir, step), 'utf8')) as {
    raw_content: string;
    payload_sha256: string;
  };
  return {
    step_id: step,
    content_base64: Buffer.from(node.raw_content, 'utf8').toString('base64'),
    payload_sha256: node.payload_sha256,
    chunk: 0,
    chunks: 1,
    truncated: false,
  };
}

const codeOf = (e: unknown) => (isContextFoldError(e) ? e.code : null);

/** Mutant: serves a node whose hashes do not verify (reads the file instead of failing). */
export class SkipsHashCheckSubject extends LibrarySubject {
  protected override async hydrate(p: Params): Promise<Result> {
    try {
      return await super.hydrate(p);
    } catch (e) {
      if (codeOf(e) !== 'INTEGRITY_CHECK') throw e;
      return rawHydrate(this.state!.dir, p.step_id as number);
    }
  }

  protected override async pageIn(p: Params): Promise<Result> {
    const r = await super.pageIn(p);
    const refused = r.refused as { step_id: number; error: string }[];
    const pages = r.pages as Result[];
    for (const f of refused.filter((x) => x.error === 'IntegrityCheckError')) {
      const page = { ...rawHydrate(this.state!.dir, f.step_id), matched_terms: [], tokens: 1 };
      pages.push(page);
      this.resident.set(f.step_id, 1);
    }
    return { ...r, pages, refused: refused.filter((x) => x.error !== 'IntegrityCheckError') };
  }
}

/** Mutant: reports the turn's pages as evicted but leaves them in the prompt. */
export class ForgetsEvictionSubject extends LibrarySubject {
  protected override async endTurn(): Promise<Result> {
    return { evicted: [...this.resident.keys()].sort((a, b) => a - b) };
  }

  protected override async evict(p: Params): Promise<Result> {
    await this.engine().evict(p.step_id as number);
    return { step_id: p.step_id };
  }
}

/**
 * Mutant: when the latest node for an intent does not fit the turn budget, pages in an older
 * node carrying the same terms that does fit (hands the intent to superseded information).
 */
export class OlderNodeInPlaceSubject extends LibrarySubject {
  private async substitute(prompt: string): Promise<ScanPick[]> {
    const engine = this.engine();
    const r = await engine.scan(prompt, { mode: 'reference' });
    const selected = [...r.selected];
    const perCall = engine.policy.max_rehydration_tokens_per_call;
    const perTurn = perTurnCap(engine.policy);
    const entries = await engine.entries();
    for (const d of r.budget_dropped) {
      const consumed = selected.reduce((n, s) => n + s.cost, 0);
      const older = entries
        .filter((e) => e.step_id < d.step_id && !selected.some((s) => s.step_id === e.step_id))
        .filter((e) => d.matched_terms.every((t) => e.identifiers.includes(t)))
        .map((e) => ({
          step_id: e.step_id,
          matched_terms: d.matched_terms,
          cost: Math.min(e.token_estimate, perCall, perTurn),
        }))
        .filter((s) => consumed + s.cost <= perTurn)
        .sort((a, b) => b.step_id - a.step_id);
      if (older[0]) selected.push(older[0]);
    }
    return selected;
  }

  protected override async scan(p: Params): Promise<Result> {
    const r = await super.scan(p);
    return { ...r, selected: await this.substitute(p.prompt as string) };
  }

  protected override async pageIn(p: Params): Promise<Result> {
    const picks = await this.substitute(p.prompt as string);
    const pages: Result[] = [];
    const refused: Result[] = [];
    let tokens = 0;
    for (const pick of picks) {
      let h: HydrateResult;
      try {
        h = await this.engine().hydrate(pick.step_id, { maxTokens: pick.cost });
      } catch (e) {
        if (!isContextFoldError(e)) throw e;
        refused.push({ step_id: pick.step_id, error: ipcfErrorName(e.code) });
        continue;
      }
      this.resident.set(pick.step_id, h.tokens);
      tokens += h.tokens;
      pages.push(this.pageResult(hydratedPage(h, pick.matched_terms)));
    }
    return { pages, refused, tokens };
  }
}

/** Mutant: answers a missing node with (empty) content instead of an explicit failure. */
export class ContentForMissingSubject extends LibrarySubject {
  protected override async hydrate(p: Params): Promise<Result> {
    try {
      return await super.hydrate(p);
    } catch (e) {
      const code = codeOf(e);
      if (code !== 'NODE_NOT_FOUND' && code !== 'BROKEN_REFERENCE') throw e;
      return {
        step_id: p.step_id,
        content_base64: '',
        payload_sha256: '0'.repeat(64),
        chunk: 0,
        chunks: 1,
        truncated: false,
      };
    }
  }
}

/** Mutant: follows a node file's symlink (or a rewritten file_path) wherever it leads. */
export class FollowsSymlinkSubject extends LibrarySubject {
  protected override async hydrate(p: Params): Promise<Result> {
    try {
      return await super.hydrate(p);
    } catch (e) {
      if (codeOf(e) !== 'PATH_CONTAINMENT') throw e;
      return rawHydrate(this.state!.dir, p.step_id as number);
    }
  }
}

/** The five mutants of the acceptance criteria, by name. */
export const MUTANTS = {
  'skips the hash check': SkipsHashCheckSubject,
  'forgets eviction': ForgetsEvictionSubject,
  'hydrates an over-budget older node in place of the latest': OlderNodeInPlaceSubject,
  'returns content for a missing node': ContentForMissingSubject,
  'follows a symlink out of the store': FollowsSymlinkSubject,
} as const;
