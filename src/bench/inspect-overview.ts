import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What {@link benchInspectOverview} measures (milliseconds). */
export interface InspectOverviewBench {
  /** From spawning `contextfold inspect` to its URL on stdout (the server listens). */
  url_printed_ms: number;
  /** From spawning to the overview's data in hand: counts and the first page of 50 nodes. */
  time_to_overview_ms: number;
  /** The first overview request alone (it opens the store: loads the index). */
  first_overview_request_ms: number;
  /** Later overview + first page, p50 of 5. */
  warm_overview_p50_ms: number;
  /** The last page of the node list. */
  last_page_ms: number;
  /** The node drawer of a middle node: hash-by-hash verification, then its payload. */
  node_drawer_ms: number;
}

const median = (xs: number[]): number =>
  Number([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1));

/** The JSON body of a GET; an HTTP error status throws. */
export async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res.json();
}

/** A `contextfold inspect` process on `dir` and its URL, once its server listens. */
export async function spawnInspector(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const cli = fileURLToPath(new URL('../cli/bin.js', import.meta.url));
  const child = spawn(process.execPath, [cli, '--dir', dir, '--json', 'inspect', '--no-open'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += String(d);
        const nl = out.indexOf('\n');
        if (nl < 0) return;
        // The first line is the server's URL, or the CLI's error (the web app not built…).
        const line = JSON.parse(out.slice(0, nl)) as { url?: unknown };
        if (typeof line.url === 'string') resolve(line.url);
        else reject(new Error(`contextfold inspect did not start: ${out.slice(0, nl)}`));
      });
      child.once('exit', (code) => reject(new Error(`contextfold inspect exited ${code}`)));
    });
    return { url, child };
  } catch (e) {
    child.kill('SIGTERM');
    throw e;
  }
}

/**
 * Time-to-overview of `contextfold inspect` on a store, as a person meets it: a fresh process
 * is spawned, and the overview's two requests (counts, first page of nodes) are timed from the
 * spawn. Then warm overviews, the last page and one node drawer.
 *
 * @example
 * const r = await benchInspectOverview('/tmp/bench/.contextfold');
 */
export async function benchInspectOverview(dir: string): Promise<InspectOverviewBench> {
  const t0 = performance.now();
  const { url, child } = await spawnInspector(dir);
  try {
    const tUrl = performance.now();
    const overview = () =>
      Promise.all([
        getJson(`${url}api/overview?store=.`),
        getJson(`${url}api/nodes?store=.&offset=0&limit=50`),
      ]);
    const [o] = (await overview()) as [{ nodes: number }, unknown];
    const tOverview = performance.now();
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await overview();
      warm.push(performance.now() - t);
    }
    let t = performance.now();
    await getJson(`${url}api/nodes?store=.&offset=${Math.max(0, o.nodes - 50)}&limit=50`);
    const lastPage = performance.now() - t;
    const page = (await getJson(
      `${url}api/nodes?store=.&offset=${Math.floor(o.nodes / 2)}&limit=1`,
    )) as { rows: { step_id: number }[] };
    const step = page.rows[0]?.step_id ?? 0;
    t = performance.now();
    await getJson(`${url}api/node?store=.&step=${step}`);
    await getJson(`${url}api/payload?store=.&step=${step}`);
    const drawer = performance.now() - t;
    return {
      url_printed_ms: Math.round(tUrl - t0),
      time_to_overview_ms: Math.round(tOverview - t0),
      first_overview_request_ms: Math.round(tOverview - tUrl),
      warm_overview_p50_ms: median(warm),
      last_page_ms: Number(lastPage.toFixed(1)),
      node_drawer_ms: Number(drawer.toFixed(1)),
    };
  } finally {
    child.kill('SIGTERM');
  }
}
