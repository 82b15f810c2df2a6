import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ContextFold } from '../engine/context-fold.js';
import { tempDir } from '../test-utils/temp-dir.js';

const tmp = tempDir();
// Removing the 31,000-node store takes a while on a loaded machine (the hook's default is 60 s).
afterAll(() => tmp.cleanup(), 300_000);

const engineModule = fileURLToPath(new URL('../../dist/engine/context-fold.js', import.meta.url));

/**
 * The figures by default (a 30,000-turn batch beside 4 × 250 folds; 200 kills, each fold
 * tiny so a kill costs one process start); CONTEXTFOLD_STRESS=1 runs 1,000 kills.
 */
const STRESS = process.env.CONTEXTFOLD_STRESS === '1';
const BIG_BATCH = 30_000;
const KILLS = STRESS ? 1_000 : 200;

/** A writer script: folds steps and prints each step once its fold returned (durable). */
function writerScript(dir: string): string {
  const script = join(dir, '..', 'writer.mjs');
  mkdirSync(join(dir, '..'), { recursive: true });
  writeFileSync(
    script,
    `import { existsSync } from 'node:fs';
import { ContextFold } from ${JSON.stringify(engineModule)};
const [dir, mode, from, count] = process.argv.slice(2);
const content = (s) => 'worker turn ' + s + '\\nport ' + (5000 + (s % 997)) + '\\n$ make test\\n' + 'x'.repeat(s % 300);
const cf = await ContextFold.open({ dir, tokenizer: 'reference', journalCompactThreshold: 64 });
process.stdout.write('open\\n');
const start = Number(from);
if (mode === 'batch') {
  const turns = Array.from({ length: Number(count) }, (_, i) => ({ stepId: start + i, summary: 'batch turn', content: content(start + i) }));
  // With a gate file: after the round that reaches GATE_AT turns (the lock is released between
  // rounds), wait until the gate exists, so another writer folds while this batch is mid-way.
  const gate = process.env.GATE_FILE;
  const gateAt = Number(process.env.GATE_AT ?? 0);
  await cf.foldMany(turns, (done, total) => {
    process.stdout.write('progress ' + done + '/' + total + '\\n');
    if (!gate || done !== gateAt) return;
    const until = Date.now() + 120000;
    while (!existsSync(gate)) {
      if (Date.now() > until) { process.stdout.write('gate timeout\\n'); return; }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  });
  process.stdout.write('batch done\\n');
} else {
  for (let s = start; s < start + Number(count); s++) {
    await cf.fold({ stepId: s, summary: 'turn ' + s, content: content(s) });
    process.stdout.write(s + '\\n');
  }
}
await cf.close();
`,
  );
  return script;
}

const contentOf = (s: number) =>
  `worker turn ${s}\nport ${5000 + (s % 997)}\n$ make test\n${'x'.repeat(s % 300)}`;

interface Run {
  child: ChildProcess;
  lines: string[];
  exit: Promise<number | null>;
  /** Resolves when a line matching `re` is printed. */
  when(re: RegExp): Promise<void>;
}

function run(script: string, args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  let buf = '';
  let stderr = '';
  child.stdout!.on('data', (b: Buffer) => {
    buf += b.toString('utf8');
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.filter((x) => x.re.test(line))) w.resolve();
      nl = buf.indexOf('\n');
    }
  });
  child.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  const exit = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      if (code !== 0 && code !== null) process.stderr.write(stderr);
      resolve(code);
    }),
  );
  return {
    child,
    lines,
    exit,
    when: (re) =>
      new Promise<void>((resolve) => {
        if (lines.some((l) => re.test(l))) resolve();
        else waiters.push({ re, resolve });
      }),
  };
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Every reported step is indexed with its exact bytes; the store validates clean. */
async function expectAllIndexed(dir: string, steps: number[]) {
  const cf = await ContextFold.open({ dir, tokenizer: 'reference' });
  const entries = new Map((await cf.entries()).map((e) => [e.step_id, e]));
  for (const s of steps) {
    expect(entries.get(s)?.payload_sha256, `step ${s}`).toBe(sha(contentOf(s)));
  }
  for (const s of steps.filter((_, i) => i % 97 === 0)) {
    expect(Buffer.from(await cf.hydrateBytes(s)).toString('utf8')).toBe(contentOf(s));
  }
  return cf;
}

describe('inter-process writers', () => {
  it('A folds a long batch while B folds one step: B is not held up by the whole batch, both end indexed', async () => {
    const dir = join(tmp.dir, 'ab', '.contextfold');
    const script = writerScript(dir);
    const gate = join(tmp.dir, 'ab', 'gate');
    // A pauses after its first round until B is done: were the lock held across rounds, B would
    // wait for the whole batch, A's gate would time out and the test would fail.
    const a = run(script, [dir, 'batch', '0', '3000'], { GATE_FILE: gate, GATE_AT: '1024' });
    await a.when(/^progress 1024\//);
    const b = run(script, [dir, 'single', '999999', '1']);
    expect(await b.exit).toBe(0);
    // B's fold returned while A's batch was still going (A releases the lock between rounds).
    expect(a.lines).not.toContain('batch done');
    writeFileSync(gate, '');
    expect(await a.exit).toBe(0);
    expect(a.lines).not.toContain('gate timeout');
    expect(b.lines).toContain('999999');
    const cf = await expectAllIndexed(dir, [...Array.from({ length: 3000 }, (_, i) => i), 999999]);
    expect(await cf.validate()).toEqual({
      ok: true,
      checked: 3001,
      sanitized: 3001,
      problems: [],
      warnings: [],
    });
    await cf.close();
  }, 180_000);

  it(`four processes × 250 folds and one ${BIG_BATCH}-turn batch at once: every entry indexed, validate clean`, async () => {
    const dir = join(tmp.dir, 'five', '.contextfold');
    const script = writerScript(dir);
    const runs = [
      run(script, [dir, 'batch', '100000', String(BIG_BATCH)]),
      ...[0, 1, 2, 3].map((w) => run(script, [dir, 'single', String(w * 250), '250'])),
    ];
    expect(await Promise.all(runs.map((r) => r.exit))).toEqual([0, 0, 0, 0, 0]);
    const steps = [
      ...Array.from({ length: 1000 }, (_, i) => i),
      ...Array.from({ length: BIG_BATCH }, (_, i) => 100_000 + i),
    ];
    const cf = await expectAllIndexed(dir, steps);
    const v = await cf.validate();
    expect(v).toEqual({
      ok: true,
      checked: steps.length,
      sanitized: steps.length,
      problems: [],
      warnings: [],
    });
    expect((await cf.entries()).length).toBe(steps.length);
    await cf.close();
  }, 600_000);

  it(`SIGKILL at random points of folds (${KILLS} kills): no entry a fold reported done is lost, no wrong byte`, async () => {
    const dir = join(tmp.dir, 'kill', '.contextfold');
    const script = writerScript(dir);
    // A seeded schedule (xorshift): the kills land anywhere from open to mid-fold.
    let seed = 0x9e3779b9;
    const rand = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    const reported: number[] = [];
    const STREAMS = 4;
    let next = 0;
    const stream = async (): Promise<void> => {
      while (next < KILLS) {
        const k = next++;
        const start = k * 1000;
        const r = run(script, [dir, 'single', String(start), '1000']);
        const roll = rand();
        if (roll < 0.1) {
          // During start-up, open or a catch-up of what the previous kill left behind.
          await new Promise((res) => setTimeout(res, rand() * 150));
        } else {
          // Within the folds that follow the n-th completed one.
          const n = Math.floor(rand() * 4);
          await Promise.race([r.when(new RegExp(`^${n === 0 ? 'open' : start + n - 1}$`)), r.exit]);
          await new Promise((res) => setTimeout(res, rand() * 8));
        }
        r.child.kill('SIGKILL');
        await r.exit;
        for (const l of r.lines) if (/^\d+$/.test(l)) reported.push(Number(l));
      }
    };
    await Promise.all(Array.from({ length: STREAMS }, stream));
    expect(reported.length).toBeGreaterThan(KILLS);
    expect(new Set(reported).size).toBe(reported.length);
    const cf = await expectAllIndexed(dir, reported);
    const v = await cf.validate();
    // A kill between a node's write and its commit leaves an orphan (or a temp file): reported,
    // never adopted, and never for a fold that reported done.
    const done = new Set(reported);
    for (const p of v.problems) {
      expect(['orphaned_node', 'integrity'], p.message).toContain(p.kind);
      if (p.kind === 'orphaned_node') expect(done.has(p.step_id!)).toBe(false);
      else expect(p.message).toMatch(/leftover temp file/);
    }
    // A kill mid-append leaves a torn journal line; the next writer moved it aside. Only ever
    // the bytes after the last newline: never a complete record.
    const quarantine = join(dir, 'quarantine');
    for (const name of existsSync(quarantine) ? readdirSync(quarantine) : []) {
      expect(name).toMatch(/^recall_index\.journal\.torn-at-\d+(\.\d+)?$/);
      expect(readFileSync(join(quarantine, name), 'utf8')).not.toContain('\n');
    }
    await cf.close();
  }, 600_000);
});
