import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProxyLogLine } from '../adapters/proxy/call-log.js';
import { anthropicRequests, openAiRequests } from '../adapters/proxy/recorded-requests.js';
import { startProxy } from '../adapters/proxy/server.js';
import { sessionStoreDir } from '../adapters/proxy/session-pool.js';
import type { HistoryRecord } from '../harness/messages.js';
import { type CallReport, runPerCall } from '../harness/per-call.js';
import { replaySession } from '../harness/replay.js';
import { Session } from '../harness/session.js';
import { readEvents } from '../harness/session-events.js';
import { readHistoryRecords } from '../import/turns-jsonl.js';

/**
 * `npm run bench -- --proxy`: the proxy's figures, as one JSON object.
 * - concurrency: 50 sessions × 20 calls through one proxy (cross-session leaks, lost events,
 *   overhead per call);
 * - per_call: `contextfold session --per-call` on every trajectory of ../shared/data (budget,
 *   tokens sent against the raw history), and whether the proxy, driven by the same history as
 *   Anthropic and OpenAI requests, made the same decisions call for call.
 * Progress goes to stderr. Timings are measurements, never assertions.
 */

const log = (s: string) => process.stderr.write(`[bench proxy] ${s}\n`);

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.min(s.length - 1, Math.floor(q * s.length))]!.toFixed(2));
}

function p50p99(xs: number[]): { p50: number; p99: number } {
  return { p50: quantile(xs, 0.5), p99: quantile(xs, 0.99) };
}

/** A stand-in model API that answers at once and keeps every body it received. */
async function fakeUpstream(): Promise<{
  url: string;
  bodies: { tag: string; body: string }[];
  close(): Promise<void>;
}> {
  const bodies: { tag: string; body: string }[] = [];
  const answer = JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text: 'ok' }],
    stop_reason: 'end_turn',
    usage: { input_tokens: 1, output_tokens: 1 },
  });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push({
        tag: String(req.headers['x-bench-session'] ?? ''),
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** Session s after k calls: reads of its own files, a question about its first one from call 8. */
function conversation(s: number, calls: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [
    { role: 'user', content: `Review package pkg${s} file by file.` },
  ];
  for (let k = 0; k < calls; k++) {
    const id = `toolu_b${s}_${k}`;
    out.push({
      role: 'assistant',
      content: [
        { type: 'tool_use', id, name: 'Read', input: { file_path: `pkg${s}/src/file${k}.ts` } },
      ],
    });
    const lines = Array.from(
      { length: 50 },
      (_, i) =>
        `export function f${i}() { return 'sess${s}-k${k}-${i}'; } // pkg${s}/src/file${k}.ts`,
    );
    const result = { type: 'tool_result', tool_use_id: id, content: lines.join('\n') };
    const ask = k >= 8 ? [{ type: 'text', text: `What does pkg${s}/src/file1.ts export?` }] : [];
    out.push({ role: 'user', content: [result, ...ask] });
  }
  return out;
}

/**
 * Each session's calls one after the other, the sessions at once: every request goes through the
 * proxy, then straight to the upstream (the client's latency without the proxy).
 */
async function driveSessions(options: {
  proxyUrl: string;
  upstreamUrl: string;
  sessions: number;
  calls: number;
}) {
  const { proxyUrl, upstreamUrl, sessions, calls } = options;
  const latency: number[] = [];
  const direct: number[] = [];
  // Per call: the client's latency through the proxy minus its latency straight to the upstream.
  const paired = new Map<string, number>();
  const ids = new Map<number, Set<string>>();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      for (let k = 0; k < calls; k++) {
        const body = JSON.stringify({
          model: 'm',
          max_tokens: 8,
          messages: conversation(s, k + 1),
        });
        const headers = { 'content-type': 'application/json', 'x-bench-session': String(s) };
        const t = performance.now();
        const res = await fetch(`${proxyUrl}/v1/messages`, { method: 'POST', headers, body });
        const text = await res.text();
        // This call's own figures: the arrays are shared by sessions that run at once.
        const viaProxy = performance.now() - t;
        latency.push(viaProxy);
        if (res.status !== 200) throw new Error(`call ${s}/${k}: ${res.status} ${text}`);
        const set = ids.get(s) ?? new Set<string>();
        set.add(res.headers.get('x-contextfold-session') ?? '');
        ids.set(s, set);
        // The same request straight to the upstream: the client's latency without the proxy.
        const d = performance.now();
        await (
          await fetch(`${upstreamUrl}/v1/messages`, {
            method: 'POST',
            headers: { ...headers, 'x-bench-session': 'direct' },
            body,
          })
        ).text();
        const straight = performance.now() - d;
        direct.push(straight);
        const key = `${res.headers.get('x-contextfold-session')}:${res.headers.get('x-contextfold-turn')}`;
        paired.set(key, viaProxy - straight);
      }
    }),
  );
  return { latency, direct, paired, ids };
}

/**
 * What the upstream received through the proxy: lines of another session in a session's call
 * (leaks), and calls carrying paged-in records.
 */
function upstreamBodies(bodies: { tag: string; body: string }[]) {
  let leaks = 0;
  let pages = 0;
  for (const b of bodies) {
    if (b.tag === 'direct') continue;
    const s = Number(b.tag);
    for (const m of b.body.matchAll(/sess(\d+)-k/g)) if (Number(m[1]) !== s) leaks++;
    if (b.body.includes('<archived_record ')) pages++;
  }
  return { leaks, pages };
}

/** The proxy's session stores: those missing a call's events, those not replaying exactly. */
async function checkStores(dir: string, calls: number) {
  let lostEvents = 0;
  let replayMismatches = 0;
  for (const id of readdirSync(join(dir, 'sessions'))) {
    const events = readEvents(sessionStoreDir(dir, id));
    const started = events.filter((e) => e.type === 'turn_started').length;
    const completed = events.filter((e) => e.type === 'turn_completed').length;
    const built = events.filter((e) => e.type === 'pack_built').length;
    if (started !== calls || completed !== calls || built !== calls) lostEvents++;
    if (!(await replaySession({ dir: sessionStoreDir(dir, id) })).matches) replayMismatches++;
  }
  return { lostEvents, replayMismatches };
}

async function concurrency(work: string, sessions = 50, calls = 20) {
  const up = await fakeUpstream();
  const logs: ProxyLogLine[] = [];
  const dir = join(work, `concurrency-${sessions}`, '.contextfold');
  const proxy = await startProxy({
    upstream: up.url,
    port: 0,
    dir,
    budget: 4000,
    keepRecent: 4,
    maxOpenSessions: 64,
    onLog: (l) => logs.push(l),
  });
  const t0 = performance.now();
  const { latency, direct, paired, ids } = await driveSessions({
    proxyUrl: proxy.url,
    upstreamUrl: up.url,
    sessions,
    calls,
  });
  const wallMs = performance.now() - t0;
  await proxy.close();
  await up.close();

  const { leaks, pages } = upstreamBodies(up.bodies);
  const callLogs = logs.filter(
    (l): l is Extract<ProxyLogLine, { kind: 'call' }> => l.kind === 'call',
  );
  const { lostEvents, replayMismatches } = await checkStores(dir, calls);
  return {
    sessions,
    calls_per_session: calls,
    calls: callLogs.length,
    wall_ms: Math.round(wallMs),
    stores: readdirSync(join(dir, 'sessions')).length,
    sessions_with_one_store: [...ids.values()].filter((s) => s.size === 1).length,
    cross_session_leaks: leaks,
    calls_with_pages: pages,
    stores_with_missing_events: lostEvents,
    stores_not_replaying_exactly: replayMismatches,
    // The proxy's own time per call, without the session's work (pack, close) and the upstream.
    overhead_excluding_pack_ms: p50p99(callLogs.map((l) => l.ms.overhead)),
    pack_ms: p50p99(callLogs.map((l) => l.ms.pack)),
    close_ms: p50p99(callLogs.map((l) => l.ms.close)),
    client_latency_ms: p50p99(latency),
    // What the client waits for beyond the upstream, minus the session's work (pack, close).
    client_added_excluding_session_ms: p50p99(
      callLogs.map((l) => (paired.get(`${l.session}:${l.turn}`) ?? 0) - l.ms.pack - l.ms.close),
    ),
    client_latency_direct_ms: p50p99(direct),
  };
}

const REPORT_KEYS: (keyof CallReport)[] = [
  'turn',
  'step_id',
  'history_messages',
  'history_tokens',
  'pack_tokens',
  'baseline_tokens',
  'live_tokens',
  'budget',
  'folded',
  'paged_in',
  'excerpted',
  'evicted',
  'warnings',
];

function pick(r: CallReport): string {
  return JSON.stringify(REPORT_KEYS.map((k) => r[k]));
}

/**
 * The history a proxy session recorded (its `append` events, times included: a folded-step
 * record carries the time of its turn), plus one assistant line so the last call is a call.
 */
function recordedHistory(dir: string): HistoryRecord[] {
  const out: HistoryRecord[] = [];
  for (const e of readEvents(dir)) if (e.type === 'append') out.push(...e.messages);
  out.push({ step_id: out.length, role: 'assistant', content: '' });
  return out;
}

/**
 * Drives the proxy with a recorded history (one request per model call), then replays the
 * history the proxy recorded with `contextfold session --per-call`'s function, and counts the
 * calls whose decisions (the CallReport) are identical.
 */
async function matchProxy(
  file: string,
  api: 'anthropic' | 'openai',
  budget: number,
  work: string,
): Promise<{ calls: number; matching: number; first_difference: number | null }> {
  const recs = readHistoryRecords(file);
  const up = await fakeUpstream();
  const logs: ProxyLogLine[] = [];
  const root = mkdtempSync(join(work, `match-${api}-`));
  const proxy = await startProxy({
    upstream: up.url,
    port: 0,
    dir: join(root, 'proxy'),
    budget,
    onLog: (l) => logs.push(l),
  });
  const calls =
    api === 'anthropic'
      ? anthropicRequests(recs, { model: 'm', max_tokens: 8 })
      : openAiRequests(recs, { model: 'm' });
  const path = api === 'anthropic' ? '/v1/messages' : '/v1/chat/completions';
  for (const c of calls) {
    const res = await fetch(`${proxy.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-contextfold-session': 'match' },
      body: JSON.stringify(c.body),
    });
    await res.text();
  }
  await proxy.close();
  await up.close();
  const proxied = logs.filter(
    (l): l is Extract<ProxyLogLine, { kind: 'call' }> => l.kind === 'call',
  );
  const replayed: CallReport[] = [];
  const session = await Session.open({
    dir: join(root, 'replay', '.contextfold'),
    budget,
    pageInToolOutput: true,
  });
  await runPerCall(session, recordedHistory(sessionStoreDir(join(root, 'proxy'), 'match')), (r) =>
    replayed.push(r),
  );
  await session.close();
  rmSync(root, { recursive: true, force: true });
  let matching = 0;
  let first: number | null = null;
  for (let i = 0; i < Math.max(proxied.length, replayed.length); i++) {
    const same = proxied[i] && replayed[i] && pick(proxied[i]!) === pick(replayed[i]!);
    if (same) matching++;
    else first ??= i;
  }
  return { calls: Math.max(proxied.length, replayed.length), matching, first_difference: first };
}

async function perCall(work: string, budget: number) {
  const dir = fileURLToPath(new URL('../../../shared/data/trajectories/', import.meta.url));
  if (!existsSync(dir)) return { skipped: `${dir} is absent` };
  const rows = [];
  for (const name of readdirSync(dir).sort()) {
    const file = join(dir, name);
    log(`per-call: ${name} …`);
    const session = await Session.open({
      dir: join(mkdtempSync(join(work, 'pc-')), '.contextfold'),
      budget,
      pageInToolOutput: true,
    });
    const t = performance.now();
    const totals = await runPerCall(session, readHistoryRecords(file), () => undefined);
    const ms = performance.now() - t;
    await session.close();
    log(`proxy match: ${name} …`);
    const anthropic = await matchProxy(file, 'anthropic', budget, work);
    const openai = await matchProxy(file, 'openai', budget, work);
    rows.push({
      trajectory: name,
      ...totals,
      replay_ms: Math.round(ms),
      proxy_match: { anthropic, openai },
    });
  }
  const big = rows.filter((r) => r.final_history_tokens > 100_000);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    budget,
    trajectories: rows,
    over_budget_calls: sum(rows.map((r) => r.over_budget_calls)),
    over_budget_live_calls: sum(rows.map((r) => r.over_budget_live_calls)),
    excerpted_calls: sum(rows.map((r) => r.excerpted_calls)),
    total: {
      calls: sum(rows.map((r) => r.calls)),
      history_tokens: sum(rows.map((r) => r.history_tokens)),
      sent_tokens: sum(rows.map((r) => r.sent_tokens)),
    },
    over_100k_sessions: {
      count: big.length,
      history_tokens: sum(big.map((r) => r.history_tokens)),
      sent_tokens: sum(big.map((r) => r.sent_tokens)),
      sent_ratio: Number(
        (
          sum(big.map((r) => r.sent_tokens)) / Math.max(1, sum(big.map((r) => r.history_tokens)))
        ).toFixed(4),
      ),
      worst_ratio: Math.max(0, ...big.map((r) => r.sent_ratio)),
    },
  };
}

/** The parts of the proxy benchmark. */
export type ProxyBenchPart = 'sequential' | 'concurrency' | 'per_call';

/**
 * Runs the proxy benchmarks in a temporary directory (removed afterwards): `sequential` (one
 * session, 20 calls: the cost of a call without contention), `concurrency` (50 sessions × 20
 * calls at once) and `per_call` (every trajectory).
 *
 * @example
 * const figures = await benchProxy({ parts: ['sequential'] });
 */
export async function benchProxy(
  options: { budget?: number; sessions?: number; calls?: number; parts?: ProxyBenchPart[] } = {},
) {
  const parts = new Set(options.parts ?? ['sequential', 'concurrency', 'per_call']);
  const work = mkdtempSync(join(tmpdir(), 'contextfold-bench-proxy-'));
  process.env.CONTEXTFOLD_CACHE_DIR ??= join(work, 'analysis-cache');
  const out: Record<string, unknown> = { node: process.version };
  try {
    if (parts.has('sequential')) {
      log(`sequential: 1 session × ${options.calls ?? 20} calls …`);
      out.sequential = await concurrency(work, 1, options.calls);
      log(JSON.stringify(out.sequential));
    }
    if (parts.has('concurrency')) {
      log(`concurrency: ${options.sessions ?? 50} sessions × ${options.calls ?? 20} calls …`);
      out.concurrency = await concurrency(work, options.sessions, options.calls);
      log(JSON.stringify(out.concurrency));
    }
    if (parts.has('per_call')) out.per_call = await perCall(work, options.budget ?? 16_000);
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
