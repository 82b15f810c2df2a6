import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ContextFold } from '../../engine/context-fold.js';
import type { ContextPack } from '../../harness/pack.js';
import { Session } from '../../harness/session.js';
import { syntheticSession } from '../../harness/synthetic.js';
import {
  drive,
  smallPolicy,
  stamped,
  stepClock,
} from '../../harness/test-utils/session-helpers.js';

/** The hostile payload every safe-rendering test uses. */
export const XSS = '<img src=x onerror=alert(1)> and <script>alert(2)</script>';

/**
 * Everything under a directory, recursively: each entry's relative path, kind, size, mtime and
 * SHA-256, so a comparison catches any write (even one that rewrote identical bytes).
 */
export function treeSnapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      const rel = relative(dir, p);
      if (st.isDirectory()) {
        out[`${rel}/`] = `dir mtime=${st.mtimeMs}`;
        walk(p);
      } else if (st.isSymbolicLink()) {
        out[rel] = `link ${readlinkSync(p)}`;
      } else {
        const sha = createHash('sha256').update(readFileSync(p)).digest('hex');
        out[rel] = `file ${st.size} mtime=${st.mtimeMs} ${sha}`;
      }
    }
  };
  walk(dir);
  return out;
}

/** Options of the synthetic session every server test shares. */
export const SESSION_OPTIONS = {
  budget: 3000,
  keepRecent: 2,
  policy: smallPolicy(800, 1000),
} as const;

/** The turns of the synthetic session; the later prompts ask about earlier turns' markers. */
export function sessionTurns(n: number) {
  return stamped(syntheticSession({ turns: n, outputLines: 30 })).map((t, i) =>
    i >= 6 && i % 3 === 0
      ? {
          ...t,
          prompt: { ...t.prompt, content: `${t.prompt.content} What did marker${i - 5} show?` },
        }
      : t,
  );
}

/** Builds a recorded session store (real engine, real o200k counts); returns its packs. */
export async function buildSessionStore(dir: string, turns = 12): Promise<ContextPack[]> {
  const session = await Session.open({ dir, ...SESSION_OPTIONS, clock: stepClock() });
  await session.pin(`Pinned by a test: ${XSS}`, { source: 'test' });
  const run = await drive(session, sessionTurns(turns));
  await session.close();
  return run.map((r) => r.pack);
}

/**
 * A store without a session whose nodes are hostile or odd: HTML and script in the summary and
 * payload, invalid UTF-8 and NUL, invisible characters. Left with an uncompacted journal, so a
 * compaction on close would show up as a write.
 */
export async function buildOddStore(dir: string): Promise<void> {
  const cf = await ContextFold.open({ dir, tokenizer: 'reference', cacheDir: false });
  await cf.foldMany([
    { stepId: 1, summary: `tool: ${XSS}`, content: `line one\n${XSS}\nline three\n` },
    {
      stepId: 2,
      summary: 'binary output',
      content: Uint8Array.from([0x6f, 0x6b, 0x0a, 0x80, 0xff, 0x41, 0x00, 0x42, 0x0d, 0x0a]),
    },
    {
      stepId: 3,
      summary: 'invisible \u202eevil\u202c',
      content: 'a\u200bb \u202eevil\u202c done\n',
    },
  ]);
  await cf.close({ compact: false });
}

/**
 * A store with problems validate must report with their paths: a node whose payload was edited
 * (hash mismatch, and a field added) and an orphaned node file without an index entry.
 */
export async function buildBrokenStore(dir: string): Promise<{ tampered: string; orphan: string }> {
  const cf = await ContextFold.open({ dir, tokenizer: 'reference', cacheDir: false });
  await cf.foldMany([
    { stepId: 1, summary: 'fine', content: 'all good\n' },
    { stepId: 2, summary: 'edited later', content: 'original bytes\n' },
  ]);
  await cf.close();
  const tampered = join(dir, 'cold_nodes', 'step_000002.json');
  const node = JSON.parse(readFileSync(tampered, 'utf8'));
  node.raw_content = 'edited bytes\n';
  node.guard_findings = ['forged: nothing to see here']; // a claim the edit added
  writeFileSync(tampered, JSON.stringify(node));
  const orphan = join(dir, 'cold_nodes', 'step_000009.json');
  writeFileSync(orphan, readFileSync(join(dir, 'cold_nodes', 'step_000001.json')));
  return { tampered, orphan };
}
