import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { MCP_ACCEPTANCE } from '../../adapters/mcp/acceptance.js';
import { toFoldTurns } from '../history.js';
import type {
  AdapterSubject,
  CallObservation,
  SubjectCase,
  SubjectCaseOptions,
} from '../subject.js';
import { WARMUP_PROMPT } from '../subject.js';
import { BIN_PATH, childEnv, type ProcessSubjectOptions } from './cli-process.js';
import { optionalPeer } from './optional-peer.js';

type McpModules = [
  typeof import('@modelcontextprotocol/sdk/client/index.js'),
  typeof import('@modelcontextprotocol/sdk/client/stdio.js'),
];

type ToolResult = { isError?: boolean; content?: { type: string; text?: string }[] };

const message = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

class McpCase implements SubjectCase {
  private readonly clients = new Map<string, Client>();
  readonly writeRoots: readonly string[];

  constructor(
    private readonly o: SubjectCaseOptions,
    private readonly sdk: McpModules,
    private readonly env: Record<string, string>,
  ) {
    this.writeRoots = [join(o.workDir, 'mcp'), join(o.workDir, 'cache')];
  }

  storeDir(session: string): string {
    return join(this.o.workDir, 'mcp', session);
  }

  /** One server process per session (one store each), as a host configures it. */
  private async connect(session: string): Promise<Client> {
    const [{ Client }, { StdioClientTransport }] = this.sdk;
    const transport = new StdioClientTransport({
      command: process.execPath,
      // A new store, filled through fold_turn: `--create` (the server refuses a missing store).
      args: [
        BIN_PATH,
        '--dir',
        this.storeDir(session),
        '--tokenizer',
        'reference',
        'mcp',
        '--create',
      ],
      env: this.env,
      cwd: this.o.workDir,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'contextfold-acceptance', version: '1.0.0' });
    await client.connect(transport);
    this.clients.set(session, client);
    return client;
  }

  async setup(): Promise<CallObservation[]> {
    const out: CallObservation[] = [];
    for (const [name, s] of Object.entries(this.o.input.sessions)) {
      const client = await this.connect(name);
      for (const args of toFoldTurns(s.history)) {
        const r = (await client.callTool({
          name: 'fold_turn',
          arguments: { ...args },
        })) as ToolResult;
        if (r.isError) throw new Error(`fold_turn ${args.step_id}: ${r.content?.[0]?.text ?? ''}`);
      }
      out.push(await this.call(name, WARMUP_PROMPT));
    }
    return out;
  }

  /** The host's pre-dispatch page-in: `scan_prompt` with `page_in`, whose result the model reads. */
  async call(session: string, prompt: string): Promise<CallObservation> {
    let r: ToolResult;
    try {
      r = (await this.clients.get(session)!.callTool({
        name: 'scan_prompt',
        arguments: { prompt, page_in: true },
      })) as ToolResult;
    } catch (e) {
      return { proceeded: false, modelInput: '', refused: [], error: message(e) };
    }
    const texts = (r.content ?? []).flatMap((c) => (c.type === 'text' && c.text ? [c.text] : []));
    if (r.isError)
      return { proceeded: true, modelInput: texts.join('\n'), refused: [], error: texts[0] };
    const head = JSON.parse(texts[0] ?? '{}') as {
      failures?: { step_id: number; error: string }[];
    };
    return {
      proceeded: true,
      modelInput: texts.join('\n'),
      refused: (head.failures ?? []).map((f) => ({ step_id: f.step_id, error: f.error })),
    };
  }

  async close(): Promise<void> {
    for (const c of this.clients.values()) await c.close();
    this.clients.clear();
  }
}

/**
 * The MCP server as a host runs it: `node dist/cli/bin.js mcp` spawned by the MCP SDK's
 * `StdioClientTransport`, driven by its `Client`. The host folds old turns with `fold_turn` and,
 * before each model call, asks `scan_prompt` with `page_in: true`; the tool result is what the
 * model reads. The server cannot evict the host's context (CONF-07 is outside its set).
 */
export class McpSubject implements AdapterSubject {
  readonly name = 'mcp-server';
  readonly entryPoint =
    'node dist/cli/bin.js mcp over stdio (MCP SDK Client + StdioClientTransport)';
  readonly acceptance = MCP_ACCEPTANCE;
  private readonly peer = optionalPeer<McpModules>(
    () =>
      Promise.all([
        import('@modelcontextprotocol/sdk/client/index.js'),
        import('@modelcontextprotocol/sdk/client/stdio.js'),
      ]),
    'the MCP SDK, an optional peer, is not installed: npm install @modelcontextprotocol/sdk',
  );

  constructor(private readonly options: ProcessSubjectOptions = {}) {}

  declare(): string[] {
    return [];
  }

  unavailable(): Promise<string | null> {
    return this.peer.unavailable();
  }

  async open(o: SubjectCaseOptions): Promise<SubjectCase> {
    const m = await this.peer.modules();
    return new McpCase(o, m, childEnv(o.workDir, this.options.env));
  }
}
