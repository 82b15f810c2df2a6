import { join } from 'node:path';
import { SESSION_ACCEPTANCE } from '../../harness/acceptance.js';
import { renderPackText } from '../../harness/pack.js';
import { Session } from '../../harness/session.js';
import { toMessages } from '../history.js';
import type {
  AdapterSubject,
  CallObservation,
  SubjectCase,
  SubjectCaseOptions,
} from '../subject.js';
import { MODEL_REPLY, WARMUP_PROMPT } from '../subject.js';

/**
 * How every in-process integration is configured for the suite: archive every turn over 32
 * tokens that is not the current one (the case histories keep records large and the rest
 * small), a budget that never forces a window, and the reference estimator so that the runner
 * counts caps the way the integration does.
 */
export const HARNESS_SETTINGS = {
  budget: 100_000,
  keepRecent: 0,
  foldThreshold: 32,
  tokenizer: 'reference',
} as const;

const message = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

/** One case of {@link SessionSubject}: a `Session` per case session, in `<work>/session/<name>`. */
class SessionCase implements SubjectCase {
  private readonly sessions = new Map<string, Session>();
  readonly writeRoots: readonly string[];

  constructor(private readonly o: SubjectCaseOptions) {
    this.writeRoots = [join(o.workDir, 'session'), join(o.workDir, 'cache')];
  }

  storeDir(session: string): string {
    return join(this.o.workDir, 'session', session);
  }

  async setup(): Promise<CallObservation[]> {
    const out: CallObservation[] = [];
    for (const [name, s] of Object.entries(this.o.input.sessions)) {
      const session = await Session.open({
        ...HARNESS_SETTINGS,
        dir: this.storeDir(name),
        sessionId: name,
        cacheDir: join(this.o.workDir, 'cache'),
      });
      this.sessions.set(name, session);
      await session.append(toMessages(s.history));
      out.push(await this.call(name, WARMUP_PROMPT));
    }
    return out;
  }

  async call(name: string, prompt: string): Promise<CallObservation> {
    const session = this.sessions.get(name)!;
    try {
      const pack = await session.beforeTurn(prompt);
      await session.afterTurn({ role: 'assistant', content: MODEL_REPLY });
      return {
        proceeded: true,
        modelInput: renderPackText(pack),
        refused: pack.metadata.page_failures.map((f) => ({ step_id: f.step_id, error: f.error })),
      };
    } catch (e) {
      return { proceeded: false, modelInput: '', refused: [], error: message(e) };
    }
  }

  async close(): Promise<void> {
    for (const s of this.sessions.values()) await s.close();
    this.sessions.clear();
  }
}

/**
 * The `Session` harness driven as an application does: `append(history)`, then per model call
 * `beforeTurn(prompt)` (the pack is what the model receives) and `afterTurn(reply)`.
 */
export class SessionSubject implements AdapterSubject {
  readonly name = 'session';
  readonly entryPoint = 'Session.open / beforeTurn(prompt) → pack / afterTurn(reply)';
  readonly acceptance = SESSION_ACCEPTANCE;

  declare(): string[] {
    return [];
  }

  async unavailable(): Promise<string | null> {
    return null;
  }

  async open(o: SubjectCaseOptions): Promise<SubjectCase> {
    return new SessionCase(o);
  }
}
