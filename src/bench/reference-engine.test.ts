import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { DEMO_QUESTIONS, demoHistory } from '../engine/demo-scenario.js';
import { transferStore } from '../engine/store-transfer.js';
import type { FoldInput } from '../engine/types.js';
import { PG_URL, pgStoreUrl } from '../test-utils/pg.js';
import { tempDir } from '../test-utils/temp-dir.js';
import {
  hydratedContent,
  REFERENCE_ENGINE_ENV,
  referenceEngine,
  referencePage,
  runReference,
} from './reference-engine.js';

const RULE = '\u2500'.repeat(60);

describe('reference engine helpers', () => {
  it('finds the page between the two rules of a hydrate, the rule-like lines inside kept', () => {
    const page = `a\r\n${RULE}\nb\n`;
    const out = `[HYDRATE] Step 1\n  x\n${RULE}\n${page}\n${RULE}\n\n[HYDRATE] Eviction …\n`;
    expect(hydratedContent(out)).toBe(page);
    expect(hydratedContent(`${RULE}\n\n${RULE}\n`)).toBe('');
    expect(hydratedContent('[ERROR] NodeNotFoundError')).toBeUndefined();
  });

  it('truncates a page as the reference does: code points, at 4 per token', () => {
    expect(referencePage('x'.repeat(12003), 3000)).toBe('x'.repeat(12003)); // estimate 3000
    expect(referencePage('x'.repeat(12004), 3000)).toBe('x'.repeat(12000)); // estimate 3001
    const astral = '\u{1F600}'.repeat(13000);
    expect(referencePage(astral, 3000)).toBe('\u{1F600}'.repeat(12000));
    expect(referencePage('', 3000)).toBe('');
  });

  it('refuses a path that does not exist, and a store not named .contextfold', () => {
    const dir = tempDir().dir;
    expect(() => referenceEngine(join(dir, 'missing.py'))).toThrow(/does not exist/);
    writeFileSync(join(dir, 'contextfold.py'), '');
    expect(referenceEngine(join(dir, 'contextfold.py'))).toBe(join(dir, 'contextfold.py'));
    expect(() => runReference({ script: 'x.py', storeDir: join(dir, 'store'), args: [] })).toThrow(
      /only a store named \.contextfold/,
    );
  });
});

const SCRIPT = process.env[REFERENCE_ENGINE_ENV];

/** Turns whose bytes stress the interop: line ends, NUL, NFD, astral, a secret, truncation. */
const TRICKY: FoldInput[] = [
  {
    stepId: 1000,
    summary: 'CRLF and NUL',
    content: 'line one\r\nline two\r\n\u0000nul\rlone CR\n',
  },
  { stepId: 1001, summary: 'café NFD', content: 'cafe\u0301 vs café, ı İ, 😀 \u2028 sep\n  ' },
  {
    stepId: 1002,
    summary: 'a secret',
    content: 'export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nok\n',
  },
  { stepId: 1003, summary: 'summary only: PostgreSQL port 5433' },
  { stepId: 1004, summary: 'long payload', content: `${'😀 long line\n'.repeat(1500)}end` },
  { stepId: 1005, summary: 'invalid UTF-8', content: new Uint8Array([0x62, 0xff, 0xfe, 0x0a]) },
];

/** Everything our store holds for a step, verified, as text (undefined: not valid UTF-8). */
async function payloadText(cf: ContextFold, step: number): Promise<string | undefined> {
  const bytes = await cf.hydrateBytes(step);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The reference validates the store and hydrates `steps` byte for byte as we stored them. */
async function expectReferenceReads(storeDir: string, steps: readonly number[]): Promise<void> {
  const v = runReference({ script: SCRIPT!, storeDir, args: ['validate'] });
  expect(v.stdout).toMatch(/Validation PASSED/);
  expect(v.status).toBe(0);
  const cf = await ContextFold.open({ dir: storeDir });
  try {
    for (const step of steps) {
      const r = runReference({ script: SCRIPT!, storeDir, args: ['hydrate', String(step)] });
      expect(r.status, `hydrate ${step}: ${r.stderr}`).toBe(0);
      const expected = await payloadText(cf, step);
      const page = hydratedContent(r.stdout);
      if (expected === undefined) {
        // Bytes that are not UTF-8 are kept in the node's encoded form; the reference shows that.
        const node = JSON.parse(
          readFileSync(
            join(storeDir, 'cold_nodes', `step_${String(step).padStart(6, '0')}.json`),
            'utf8',
          ),
        ) as { raw_content: string };
        expect(page).toBe(referencePage(node.raw_content, 3000));
      } else {
        expect(page, `hydrate ${step}`).toBe(referencePage(expected, 3000));
      }
    }
  } finally {
    await cf.close({ compact: false });
  }
}

/** Writes the demo session and the tricky turns, pages one in and evicts it. */
async function writeStore(store: string): Promise<number[]> {
  const cf = await ContextFold.open({ store, tokenizer: 'reference' });
  await cf.foldMany(demoHistory());
  for (const t of TRICKY) await cf.fold(t);
  await cf.hydrate(137);
  await cf.evict(137);
  await cf.close();
  return [0, 37, 137, 318, 499, ...TRICKY.map((t) => t.stepId)];
}

const suite = SCRIPT ? describe : describe.skip;

suite(
  SCRIPT
    ? 'a store this version writes, read by the reference engine'
    : `needs the Python reference engine (set ${REFERENCE_ENGINE_ENV} to its contextfold.py; not installable here): a store this version writes, read by the reference engine`,
  () => {
    it('validates after close, and every page hydrates with our bytes', async () => {
      const root = tempDir().dir;
      const dir = join(root, '.contextfold');
      const steps = await writeStore(dir);
      await expectReferenceReads(dir, steps);
    }, 120_000);

    it('selects what our reference mode selects, on the demo questions', async () => {
      const root = tempDir().dir;
      const dir = join(root, '.contextfold');
      const cf = await ContextFold.open({ dir, tokenizer: 'reference', retrieval: 'reference' });
      await cf.foldMany(demoHistory());
      await cf.close();
      const again = await ContextFold.open({ dir, tokenizer: 'reference' });
      try {
        for (const q of DEMO_QUESTIONS.ask) {
          const ours = (await again.scan(q, { mode: 'reference' })).selected.map((p) => p.step_id);
          const r = runReference({ script: SCRIPT!, storeDir: dir, args: ['scan', q] });
          expect(r.status).toBe(0);
          const theirs = /hydrate Step\(s\) ([\d, ]+)/.exec(r.stdout)?.[1]?.split(', ').map(Number);
          expect(ours.length).toBeGreaterThan(0);
          expect(ours, q).toEqual(theirs);
        }
      } finally {
        await again.close({ compact: false });
      }
    }, 120_000);

    it('one store, both engines in turn: each reads what the other wrote', async () => {
      const root = tempDir().dir;
      const dir = join(root, '.contextfold');
      const payload = join(root, 'turn.txt');
      writeFileSync(payload, '$ psql -p 5434 -U admin\nConflict resolved on port 5434\n');
      const ref = (...args: string[]) => runReference({ script: SCRIPT!, storeDir: dir, args });
      expect(ref('fold', '37', 'PostgreSQL configured on Port 5433').status).toBe(0);
      expect(ref('fold', '91', 'PostgreSQL switched to Port 5434', '--file', payload).status).toBe(
        0,
      );
      const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
      await cf.fold({ stepId: 137, summary: 'PostgreSQL port reverted to 5433' });
      await cf.evict(37);
      await cf.close();
      expect(ref('fold', '200', 'JWT secret rotated in auth/middleware.py').status).toBe(0);
      await expectReferenceReads(dir, [37, 91, 137, 200]);
      const again = await ContextFold.open({ dir, tokenizer: 'reference' });
      try {
        expect(await again.validate()).toMatchObject({ ok: true, checked: 4 });
        expect((await again.hydrate(200)).content).toBe('JWT secret rotated in auth/middleware.py');
        const scan = await again.scan('Which file holds the JWT secret?');
        expect(scan.selected.map((p) => p.step_id)).toEqual([200]);
      } finally {
        await again.close({ compact: false });
      }
    }, 120_000);

    it.runIf(PG_URL)(
      'a PostgreSQL store, exported, validates and hydrates',
      async () => {
        const url = pgStoreUrl('refexport');
        const steps = await writeStore(url);
        const root = tempDir().dir;
        const dir = join(root, '.contextfold');
        await transferStore({ from: url, to: dir });
        await expectReferenceReads(dir, steps);
      },
      120_000,
    );
  },
);
