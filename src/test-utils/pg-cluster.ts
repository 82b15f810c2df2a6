import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';

/** A throwaway PostgreSQL cluster: its superuser URL (database `contextfold`) and how to stop it. */
export interface PgCluster {
  url: string;
  port: number;
  dataDir: string;
  /** `pg_ctl` as the cluster's owner (stop, restart). */
  ctl(args: string[]): void;
  /** Stops the server, keeping the cluster (`fast`: a clean shutdown; `immediate`: a crash). */
  stopServer(mode: 'fast' | 'immediate'): void;
  /** Starts the stopped server again, with the options, port and socket of the first start. */
  startServer(): void;
  /** Stops the server and removes the cluster. */
  stop(): void;
}

/** Options of {@link startPgCluster}. */
export interface PgClusterOptions {
  /**
   * Commits acknowledged only once their WAL reached the OS (`synchronous_commit=on`): needed
   * when a test crashes the server (an immediate stop) and counts every reported commit. The
   * default is off, for speed; fsync stays off either way (the OS itself does not crash).
   */
  durableCommits?: boolean;
}

/** Where PostgreSQL's server binaries are: $PG_BIN, the PATH, or Debian's versioned directory. */
export function findPgBin(): string | null {
  const candidates: string[] = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  for (const d of (process.env.PATH ?? '').split(':')) if (d) candidates.push(d);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    for (const v of readdirSync(debian).sort((a, b) => Number(b) - Number(a))) {
      candidates.push(join(debian, v, 'bin'));
    }
  }
  for (const d of candidates) {
    if (existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl'))) return d;
  }
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The user the server runs as: this one, or (as root, which initdb refuses) `postgres`/`nobody`. */
function serverUser(): { name: string; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    const r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    if (r.status === 0 && g.status === 0) {
      return { name, uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run initdb');
}

/**
 * Starts a private cluster in `dir` (created; removed by `stop`): initdb with trust auth for a
 * `contextfold` superuser, a free port on 127.0.0.1, the unix socket inside `dir`, fsync off
 * (a test server). As root it runs as `postgres` (or `nobody`) through `runuser`.
 */
export async function startPgCluster(
  dir: string,
  options: PgClusterOptions = {},
): Promise<PgCluster> {
  const bin = findPgBin();
  if (!bin) throw new Error('PostgreSQL server binaries (initdb, pg_ctl) not found');
  const user = serverUser();
  mkdirSync(dir, { recursive: true });
  const dataDir = join(dir, 'data');
  if (user) {
    // The server's user owns the cluster's directory (its parent must let it through: the
    // caller puts it directly in the system temp dir).
    chownSync(dir, user.uid, user.gid);
    chmodSync(dir, 0o700);
  }
  const run = (tool: string, args: string[]) => {
    const cmd = user ? 'runuser' : join(bin, tool);
    const full = user ? ['-u', user.name, '--', join(bin, tool), ...args] : args;
    execFileSync(cmd, full, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  };
  run('initdb', [
    '-D',
    dataDir,
    '-A',
    'trust',
    '-U',
    'contextfold',
    '-E',
    'UTF8',
    '--locale=C',
    '--no-sync',
  ]);
  let port = 0;
  let opts = '';
  const start = () =>
    run('pg_ctl', [
      '-D',
      dataDir,
      '-o',
      opts,
      '-l',
      join(dir, 'server.log'),
      '-w',
      '-t',
      '60',
      'start',
    ]);
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    const sync = options.durableCommits ? 'on' : 'off';
    opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=${sync} -c full_page_writes=off -c max_connections=200`;
    try {
      start();
      break;
    } catch (e) {
      if (attempt >= 2) throw e;
    }
  }
  const ctl = (args: string[]) => run('pg_ctl', ['-D', dataDir, ...args]);
  const stop = () => {
    try {
      ctl(['-m', 'immediate', '-w', 'stop']);
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  };
  const base = `postgres://contextfold@127.0.0.1:${port}`;
  try {
    const c = new pg.Client({ connectionString: `${base}/postgres` });
    await c.connect();
    await c.query('CREATE DATABASE contextfold');
    await c.end();
  } catch (e) {
    stop();
    throw e;
  }
  const stopServer = (mode: 'fast' | 'immediate') => ctl(['-m', mode, '-w', '-t', '60', 'stop']);
  return { url: `${base}/contextfold`, port, dataDir, ctl, stopServer, startServer: start, stop };
}
