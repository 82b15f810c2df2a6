/**
 * `contextfold proxy`: an HTTP proxy between any unmodified client (Claude Code, the Anthropic
 * and OpenAI SDKs, agent frameworks that take a base URL) and the model API. Every Anthropic
 * Messages / OpenAI Chat Completions call is run through a harness session: old verbose turns
 * are folded into verified cold storage, what the live turn needs is paged back in for that
 * call only (CONF-07, enforced: the client never sees the pack), and the answer streams back
 * byte for byte.
 *
 * @example
 * import { startProxy } from 'contextfold/proxy';
 * const proxy = await startProxy({ upstream: 'https://api.anthropic.com', budget: 32_000 });
 * console.log(`ANTHROPIC_BASE_URL=${proxy.env.ANTHROPIC_BASE_URL}`);
 */

export { isLoopbackHost as isLoopback } from '../../net/loopback.js';
export {
  type CallOutcome,
  type CallTimes,
  type Endpoint,
  humanLogLine,
  type ProxyLogLine,
} from './call-log.js';
export { SESSION_HEADER } from './headers.js';
export { type ApiKind, errorBody } from './provider-errors.js';
export { type ProxyOptions, type RunningProxy, startProxy } from './server.js';
export { sessionStoreDir } from './session-pool.js';
