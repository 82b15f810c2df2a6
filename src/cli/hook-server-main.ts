import { serveHooks } from './hook-server.js';

// `node hook-server-main.js <socket> [idle-ms]`: started detached by a hook run that found no
// server (see hook-client.ts); stops when idle or when its socket goes away.
const [socketPath, idle] = process.argv.slice(2);
// What `ps` shows: a user who wonders what this process is can find it in the docs.
process.title = 'contextfold-hook-server';
if (!socketPath) {
  process.stderr.write('usage: hook-server-main.js <socket> [idle-ms]\n');
  process.exit(1);
}
const server = await serveHooks({
  socketPath,
  ...(idle ? { idleMs: Number(idle) } : {}),
});
if (server) await server.closed;
