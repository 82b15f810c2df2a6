import { ContextFold } from '../engine/context-fold.js';
import type { RetrievalMode } from '../engine/types.js';

/**
 * A fresh process that opens a store, scans and pages in one prompt, and reports its timings
 * and its peak resident memory (the bench runs it as a child: the bench process itself holds
 * the synthetic turns). `node dist/bench/open-scan.js DIR MODE PROMPT`.
 */
async function main(): Promise<void> {
  const [dir, mode, prompt] = process.argv.slice(2);
  if (!dir || !mode || prompt === undefined) {
    throw new Error('usage: open-scan.js DIR MODE PROMPT');
  }
  const t0 = performance.now();
  const cf = await ContextFold.open({ dir, retrieval: mode as RetrievalMode });
  // Syncs with the store (status would also read every node for its sanitized count).
  await cf.entriesPage({ limit: 0 });
  const t1 = performance.now();
  const scan = await cf.scan(prompt);
  const t2 = performance.now();
  const page = await cf.pageIn(prompt);
  const t3 = performance.now();
  await cf.close({ compact: false });
  process.stdout.write(
    `${JSON.stringify({
      open_ms: Number((t1 - t0).toFixed(1)),
      scan_ms: Number((t2 - t1).toFixed(1)),
      page_in_ms: Number((t3 - t2).toFixed(1)),
      picks: scan.selected.length,
      pages: page.pages.length,
      peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
      cpu_ms: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
    })}\n`,
  );
}

main().catch((e) => {
  process.stderr.write(`open-scan: ${e instanceof Error ? e.message : e}\n`);
  process.exitCode = 1;
});
