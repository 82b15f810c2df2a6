import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import type { RetrievalMode } from '../engine/types.js';
import { isLoopbackHost } from '../net/loopback.js';
import { UsageError } from '../protocol/errors.js';
import { isPgUrl, shownStore } from '../store/pg/pg-url.js';
import type { StoreInfo } from './api-types.js';
import { createInspectorApp } from './app.js';
import { loadAssets } from './assets.js';
import { newToken } from './security.js';
import { StoreView } from './store-view.js';
import { discoverStores } from './stores.js';

/** Options of {@link startInspector}. */
export interface InspectorOptions {
  /** The directory to inspect: a store, or a directory with `sessions/*` / `claude-code/*` stores. */
  dir: string;
  /** Interface to bind. Default `127.0.0.1`; anything but loopback needs `allowRemote`. */
  host?: string;
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** Allow binding a non-loopback host (the archive is then reachable by anyone with the URL). */
  allowRemote?: boolean;
  /** Token counter for stores without a recorded session. Default: the session's, else `o200k`. */
  tokenizer?: 'o200k' | 'reference';
  /** Retrieval mode of the "what would be paged" box. Default `ranked`. */
  retrieval?: RetrievalMode;
  /** The built web app (default: `dist/inspect/static` of this package). */
  assetsDir?: string;
  /** The URL token; default a fresh random one. */
  token?: string;
  /**
   * Told each engine warning about a store (e.g. a corrupt derived index rebuilt in memory),
   * once, with the store's id; the overview shows them too. The CLI prints them on stderr.
   */
  onWarning?: (message: string, store: string) => void;
}

/** A running inspector. */
export interface Inspector {
  /** The URL to open, token included: `http://127.0.0.1:PORT/TOKEN/`. */
  url: string;
  host: string;
  port: number;
  stores: StoreInfo[];
  /** Things the user must be told (e.g. a non-loopback bind). */
  warnings: string[];
  /** Stops the server and closes every engine (nothing is compacted or written). */
  close(): Promise<void>;
}

function checkOptions(o: InspectorOptions): { host: string; port: number } {
  if (!o || typeof o.dir !== 'string' || o.dir === '') {
    throw new UsageError('startInspector needs { dir }: the store directory, e.g. ".contextfold"');
  }
  if (isPgUrl(o.dir)) {
    throw new UsageError(
      `the inspector reads a store directory, not a database: ${shownStore(o.dir)} (export the store with contextfold --store URL export --to DIR, then inspect DIR)`,
    );
  }
  const host = o.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.trim() === '' || /[\s/]/.test(host)) {
    throw new UsageError(`--host must be a host name or IP address, got '${String(host)}'`);
  }
  const port = o.port ?? 0;
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, got ${String(o.port)}`);
  }
  if (!isLoopbackHost(host) && !o.allowRemote) {
    throw new UsageError(
      `refusing to bind ${host}: it is not a loopback address and would expose the archive to the network; pass --allow-remote to do it anyway`,
    );
  }
  return { host, port };
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((done, reject) => {
    const onError = (e: NodeJS.ErrnoException): void => {
      reject(
        new UsageError(
          e.code === 'EADDRINUSE'
            ? `port ${port} on ${host} is already in use: pick another with --port (0 picks a free one)`
            : `cannot listen on ${host}:${port}: ${e.code ?? e.message}`,
        ),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      done(server.address() as AddressInfo);
    });
  });
}

const urlHost = (host: string): string =>
  host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;

/**
 * Serves the read-only inspector for a store directory: overview, session timeline, packs,
 * nodes, search. Nothing it serves writes to the store or the session log (CONF-08). Binds to
 * loopback; every URL carries a random token and requests without it get 403.
 *
 * @example
 * const inspector = await startInspector({ dir: '.contextfold' });
 * console.log(inspector.url); // http://127.0.0.1:41234/3q…Zk/
 * await inspector.close();
 */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const { host, port } = checkOptions(options);
  const stores = discoverStores(options.dir);
  const assets = loadAssets(options.assetsDir);
  const token = options.token ?? newToken();
  const views = new Map(
    stores.map((s) => [
      s.id,
      new StoreView(s, {
        ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
        ...(options.retrieval ? { retrieval: options.retrieval } : {}),
        ...(options.onWarning ? { onWarning: (m: string) => options.onWarning!(m, s.id) } : {}),
      }),
    ]),
  );
  const app = createInspectorApp({ token, root: resolve(options.dir), views, assets });
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  const address = await listen(server, host, port);
  views.get(stores[0]!.id)!.warm();
  const warnings = isLoopbackHost(host)
    ? []
    : [
        `the inspector listens on ${host}, which is not loopback: anyone who can reach it and has the URL can read the archive`,
      ];
  let closed = false;
  return {
    url: `http://${urlHost(host)}:${address.port}/${token}/`,
    host,
    port: address.port,
    stores,
    warnings,
    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      for (const v of views.values()) await v.close();
    },
  };
}
