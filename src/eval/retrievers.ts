import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ContextFold } from '../engine/context-fold.js';
import type { Tokenizer } from '../extract/tokenizer.js';
import { summarizeTurn } from '../harness/summarize.js';
import { analyzeNode, type NodeAnalysis } from '../retrieval/node-analysis.js';
import { focusWindow } from '../retrieval/ranked-focus.js';
import { RankedIndex } from '../retrieval/ranked-index.js';
import { type RankedTuning, rankedScan } from '../retrieval/ranked-scan.js';
import { Bm25ChunkBaseline } from './bm25-baseline.js';
import type { ScoredPage, TrajectoryTurn } from './types.js';

/** The default policy's caps (eval/README.md §Protocol 2). */
export const EVAL_CAPS = Object.freeze({ perTurn: 3500, perCall: 3000 });

/** What the eval asks of a retriever, per trajectory: fold turns in order, answer a prompt. */
export interface SessionRetriever {
  fold(turns: readonly TrajectoryTurn[]): Promise<void>;
  /** The pages for a prompt and the time its scan took (ms; not deterministic). */
  ask(prompt: string): Promise<{ pages: ScoredPage[]; scanMs: number }>;
  close(): Promise<void>;
}

/** What a retriever is built from, per trajectory. */
export interface RetrieverContext {
  /** A fresh directory for this trajectory's store (engine retrievers only). */
  dir: string;
  tokenizer: Tokenizer;
  summarize: (turn: TrajectoryTurn) => string;
  /** The trajectory's name. */
  name: string;
  /** Analyses by `trajectory:step` shared across runs (memory retriever; text-only inputs). */
  analyses?: Map<string, NodeAnalysis>;
}

/** The retrievers the eval can measure. */
export type EvalRetriever =
  | { kind: 'engine'; mode: 'reference' | 'ranked' }
  | { kind: 'memory'; tuning?: Partial<RankedTuning> }
  | { kind: 'bm25-chunks' };

/** The name a retriever reports under (`ranked`, `reference`, `bm25-chunks`, `ranked-memory`). */
export function retrieverName(r: EvalRetriever): string {
  return r.kind === 'engine' ? r.mode : r.kind === 'memory' ? 'ranked-memory' : 'bm25-chunks';
}

/** The engine through its public API: fold into a temporary store, `pageIn` the prompt. */
async function engineRetriever(
  mode: 'reference' | 'ranked',
  ctx: RetrieverContext,
): Promise<SessionRetriever> {
  const engine = await ContextFold.open({
    dir: join(ctx.dir, '.contextfold'),
    tokenizer: 'o200k',
    retrieval: mode,
    cacheDir: false,
  });
  return {
    async fold(turns) {
      if (turns.length === 0) return;
      await engine.foldMany(
        turns.map((t) => ({ stepId: t.step_id, summary: ctx.summarize(t), content: t.content })),
      );
    },
    async ask(prompt) {
      const t0 = performance.now();
      await engine.scan(prompt, { mode });
      const scanMs = performance.now() - t0;
      const r = await engine.pageIn(prompt, { mode });
      return { pages: r.pages.map((p) => ({ step_id: p.step_id, content: p.content })), scanMs };
    },
    close: () => engine.close({ compact: false }),
  };
}

/**
 * The ranked page-in without the engine: the same analysis, index, scan and windows the engine
 * runs, over the trajectory text in memory (no store, no hashing), so training and
 * leave-one-session-out runs can try other weights quickly. A test checks it pages exactly what
 * the engine pages.
 */
function memoryRetriever(
  tuning: Partial<RankedTuning> | undefined,
  ctx: RetrieverContext,
): SessionRetriever {
  const index = new RankedIndex();
  const texts = new Map<number, string>();
  const count = (s: string) => ctx.tokenizer.count(s);
  return {
    async fold(turns) {
      for (const t of turns) {
        const summary = ctx.summarize(t);
        // As the engine: an empty payload pages its summary.
        const text = t.content === '' ? summary : t.content;
        texts.set(t.step_id, text);
        const key = `${ctx.name}:${t.step_id}`;
        let a = ctx.analyses?.get(key);
        if (!a) {
          a = analyzeNode({ summary, text, tokens: count(text) });
          ctx.analyses?.set(key, a);
        }
        index.addAnalysis(t.step_id, a);
      }
    },
    async ask(prompt) {
      const t0 = performance.now();
      const scan = rankedScan(index, prompt, {
        perTurnCap: EVAL_CAPS.perTurn,
        perCallCap: EVAL_CAPS.perCall,
        ...(tuning ? { tuning } : {}),
      });
      const scanMs = performance.now() - t0;
      const pages: ScoredPage[] = [];
      let used = 0;
      for (const pick of scan.selected) {
        const budget = Math.min(pick.cost, EVAL_CAPS.perTurn - used);
        if (budget <= 0) continue;
        const w = focusWindow({
          content: texts.get(pick.step_id)!,
          focus: pick.focus,
          maxTokens: budget,
          count,
        });
        pages.push({ step_id: pick.step_id, content: w.text });
        used += w.tokens;
      }
      return { pages, scanMs };
    },
    async close() {},
  };
}

function baselineRetriever(ctx: RetrieverContext): SessionRetriever {
  const b = new Bm25ChunkBaseline(ctx.tokenizer);
  let last = -1;
  return {
    async fold(turns) {
      b.add(turns);
      if (turns.length > 0) last = turns.at(-1)!.step_id;
    },
    async ask(prompt) {
      const t0 = performance.now();
      const pages = b.pages(prompt, last, EVAL_CAPS.perTurn);
      return { pages, scanMs: performance.now() - t0 };
    },
    async close() {},
  };
}

/** Builds the retriever for one trajectory. */
export async function openRetriever(
  r: EvalRetriever,
  ctx: RetrieverContext,
): Promise<SessionRetriever> {
  if (r.kind === 'engine') return engineRetriever(r.mode, ctx);
  if (r.kind === 'memory') return memoryRetriever(r.tuning, ctx);
  return baselineRetriever(ctx);
}

/** The eval's default summariser (the harness's, as the engine's users fold with). */
export const defaultEvalSummary = (t: TrajectoryTurn): string => summarizeTurn(t);
