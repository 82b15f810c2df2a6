import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PROXY_ACCEPTANCE } from '../../adapters/proxy/acceptance.js';
import type { ProxyLogLine } from '../../adapters/proxy/call-log.js';
import { SESSION_HEADER } from '../../adapters/proxy/headers.js';
import { type RunningProxy, startProxy } from '../../adapters/proxy/server.js';
import { sessionStoreDir } from '../../adapters/proxy/session-pool.js';
import type {
  AdapterSubject,
  CallObservation,
  SubjectCase,
  SubjectCaseOptions,
} from '../subject.js';
import { WARMUP_PROMPT } from '../subject.js';
import { type FakeModelApi, startFakeModelApi } from './fake-model-api.js';
import { bodyText, DIALECTS, type Dialect, type DialectClient } from './proxy-dialects.js';
import { HARNESS_SETTINGS } from './session-subject.js';

type Json = Record<string, unknown>;

/** How the proxy reports a refused page: a warning of the call's log line (from the pack). */
const REFUSAL_RE = /^page-in of step (\d+) refused \(([A-Za-z]+):/;

const message = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

/** Page refusals of the log lines of one session's call. */
function refusalsOf(lines: readonly ProxyLogLine[], session: string): CallObservation['refused'] {
  const out: CallObservation['refused'] = [];
  for (const l of lines) {
    if (l.kind !== 'call' || l.session !== session) continue;
    for (const w of l.warnings) {
      const m = REFUSAL_RE.exec(w);
      if (m) out.push({ step_id: Number(m[1]), error: m[2]! });
    }
  }
  return out;
}

/** One case: a fake model API, the proxy in front of it, one conversation per case session. */
class ProxyCase implements SubjectCase {
  private readonly conversations = new Map<string, Json[]>();
  private readonly client: DialectClient;
  readonly writeRoots: readonly string[];

  constructor(
    private readonly o: SubjectCaseOptions,
    dialect: Dialect,
    private readonly api: FakeModelApi,
    private readonly proxy: RunningProxy,
    private readonly logs: ProxyLogLine[],
  ) {
    this.client = DIALECTS[dialect];
    this.writeRoots = [join(o.workDir, 'proxy'), join(o.workDir, 'cache'), join(o.workDir, 'log')];
  }

  /** The proxy's store of a conversation named by `x-contextfold-session`. */
  storeDir(session: string): string {
    return sessionStoreDir(join(this.o.workDir, 'proxy'), session);
  }

  async setup(): Promise<CallObservation[]> {
    const out: CallObservation[] = [];
    for (const [name, s] of Object.entries(this.o.input.sessions)) {
      this.conversations.set(name, this.client.history(s.history));
      out.push(await this.call(name, WARMUP_PROMPT));
    }
    return out;
  }

  /** A client call: the whole conversation and the prompt, sent to the proxy over HTTP. */
  async call(session: string, prompt: string): Promise<CallObservation> {
    const messages = [...this.conversations.get(session)!, this.client.prompt(prompt)];
    const sentBefore = this.api.received.length;
    const logsBefore = this.logs.length;
    let res: Response;
    let answer: string;
    try {
      res = await fetch(`${this.proxy.url}${this.client.path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SESSION_HEADER]: session,
          ...this.client.headers,
        },
        body: JSON.stringify(this.client.body(messages)),
      });
      answer = await res.text();
    } catch (e) {
      return { proceeded: false, modelInput: '', refused: [], error: message(e) };
    }
    const sent = this.api.received.slice(sentBefore);
    const refused = refusalsOf(this.logs.slice(logsBefore), session);
    if (!res.ok) {
      const error = `the proxy answered ${res.status}: ${answer.slice(0, 200)}`;
      const modelInput = sent.map((r) => bodyText(r.body)).join('\n');
      return { proceeded: sent.length > 0, modelInput, refused, error };
    }
    // A conversation the proxy moved to a fork is no longer in the store the runner changed.
    const went = res.headers.get(SESSION_HEADER);
    if (went !== session) throw new Error(`the proxy moved session ${session} to ${went}`);
    if (sent.length !== 1) throw new Error(`the model API got ${sent.length} requests for a call`);
    this.conversations.set(session, [...messages, this.client.reply(JSON.parse(answer) as Json)]);
    return { proceeded: true, modelInput: bodyText(sent[0]!.body), refused };
  }

  async close(): Promise<void> {
    await this.proxy.close();
    await this.api.close();
  }
}

/**
 * The proxy as a client uses it: `startProxy` in front of a local fake model API (one of each
 * per case, on free loopback ports, store root and analysis cache in the case's directory),
 * and each case session a conversation that resends its whole history with every prompt over
 * HTTP (`fetch`), in one dialect, naming its session with `x-contextfold-session`. What the
 * model receives is the request body the fake model API recorded; refused pages are read from
 * the call's log line (`onLog`), and every log line is kept as a file of the case (the runner
 * scans it for leaked text like the stores). The proxy owns every request, so it evicts
 * (CONF-07).
 */
export class ProxySubject implements AdapterSubject {
  readonly name: string;
  readonly entryPoint: string;
  readonly acceptance = PROXY_ACCEPTANCE;

  constructor(private readonly dialect: Dialect = 'anthropic') {
    this.name = `proxy-${dialect}`;
    this.entryPoint = `startProxy({ upstream }) + HTTP POST ${DIALECTS[dialect].path} (${dialect === 'anthropic' ? 'Anthropic Messages' : 'OpenAI Chat Completions'})`;
  }

  declare(): string[] {
    return [];
  }

  async unavailable(): Promise<string | null> {
    return null;
  }

  async open(o: SubjectCaseOptions): Promise<SubjectCase> {
    const logs: ProxyLogLine[] = [];
    // The log as `contextfold proxy --json` prints it, kept where the runner scans for leaks.
    const logFile = join(o.workDir, 'log', 'proxy.jsonl');
    mkdirSync(join(o.workDir, 'log'));
    const api = await startFakeModelApi();
    try {
      const proxy = await startProxy({
        ...HARNESS_SETTINGS,
        upstream: api.url,
        port: 0,
        dir: join(o.workDir, 'proxy'),
        cacheDir: join(o.workDir, 'cache'),
        onLog: (line) => {
          logs.push(line);
          appendFileSync(logFile, `${JSON.stringify(line)}\n`);
        },
      });
      return new ProxyCase(o, this.dialect, api, proxy, logs);
    } catch (e) {
      await api.close();
      throw e;
    }
  }
}
