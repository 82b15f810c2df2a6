// The public surface, pinned: every entry point of package.json `exports`, its sorted names
// (values and types) stated here by hand. Adding, removing or renaming a public name fails this
// test until the list below is edited in the same change: the surface never drifts silently.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
// The root's budget of names: the engine, the session, and every error class with its guard
// (eleven of each) are most of it, with the option and result types of their signatures (a
// user can name what they pass and get back); anything else goes to a subpath.
const ROOT_LIMIT = 77;

const EXPECTED: Record<string, string[]> = {
  '.': [
    'AfterTurnResult',
    'BrokenReferenceError',
    'ContextFold',
    'ContextFoldEngine',
    'ContextFoldError',
    'ContextPack',
    'DEFAULT_POLICY',
    'EntriesPage',
    'ErrorCode',
    'EvictResult',
    'FoldInput',
    'FoldResult',
    'GuardRunReport',
    'GuardTableError',
    'HashCheck',
    'HydrateOptions',
    'HydrateResult',
    'HydrationPolicy',
    'IPCF_VERSION',
    'IndexWarning',
    'IntegrityCheckError',
    'LockTimeoutError',
    'Message',
    'NodeCheck',
    'NodeFields',
    'NodeNotFoundError',
    'OpenOptions',
    'OrphanedNodeError',
    'Page',
    'PageFinding',
    'PageInFailure',
    'PageInResult',
    'PathContainmentError',
    'ProblemKind',
    'RecallResult',
    'Redactor',
    'RepairAction',
    'RepairItem',
    'RepairOptions',
    'RepairResult',
    'ReplayResult',
    'ScanOptions',
    'Session',
    'SessionEvent',
    'SessionOptions',
    'StatusResult',
    'StepConflictError',
    'StoreNotFoundError',
    'StoreUnavailableError',
    'Summarizer',
    'SummarizerInput',
    'Tokenizer',
    'ToolCall',
    'TransferOptions',
    'TransferPhase',
    'TransferResult',
    'UsageError',
    'ValidateResult',
    'ValidationProblem',
    'isBrokenReferenceError',
    'isContextFoldError',
    'isGuardTableError',
    'isIntegrityCheckError',
    'isLockTimeoutError',
    'isNodeNotFoundError',
    'isOrphanedNodeError',
    'isPathContainmentError',
    'isStepConflictError',
    'isStoreNotFoundError',
    'isStoreUnavailableError',
    'isUsageError',
    'readEvents',
    'repairStore',
    'replaySession',
    'runGuardConformance',
    'scanPage',
    'transferStore',
  ],
  './harness': [
    'AfterTurnResult',
    'ArchivedBlockInfo',
    'AssembleInput',
    'AssistantMessage',
    'CallReport',
    'ChainHead',
    'CompressionNote',
    'CompressionStrategy',
    'ContextPack',
    'EVENTS_FILE',
    'EventLogMark',
    'FOLDED_STEPS_FOOTER',
    'FOLDED_STEPS_HEADER',
    'FoldReason',
    'FoldRef',
    'FoldedNote',
    'HistoryMessage',
    'HistoryRecord',
    'Layer',
    'LiveExcerpt',
    'LiveExcerptNote',
    'LiveOverflow',
    'MAX_SUMMARY_CHARS',
    'Message',
    'PackEntry',
    'PackMetadata',
    'PackPage',
    'PackTurn',
    'PagedInNote',
    'PerCallTotals',
    'PinnedItem',
    'RecordsHead',
    'RecordsMark',
    'RecordsRead',
    'ReplayCheckpoint',
    'ReplayMismatch',
    'ReplayOptions',
    'ReplayResult',
    'ReplaySource',
    'ReplayStop',
    'Role',
    'Session',
    'SessionConfig',
    'SessionEvent',
    'SessionEventType',
    'SessionOptions',
    'StrippedBlock',
    'StrippedRecord',
    'Summarizer',
    'SummarizerInput',
    'SummaryMessage',
    'SystemMessage',
    'TokenMeter',
    'ToolCall',
    'ToolMessage',
    'TruncationNote',
    'Turn',
    'TurnFacts',
    'TurnReport',
    'TurnStepIds',
    'UserMessage',
    'assemblePack',
    'beginCall',
    'buildFoldedStep',
    'compressRecent',
    'continueSession',
    'defaultSummary',
    'describeTurn',
    'endCall',
    'formatArchivedBlock',
    'groupTurns',
    'inspectColdNode',
    'loadEvents',
    'messageToRecord',
    'packSha256',
    'parseEvents',
    'parseHistoryRecord',
    'parseMessage',
    'readEvents',
    'recordToMessage',
    'renderFoldedStep',
    'renderMessage',
    'renderMessages',
    'renderPackForHuman',
    'renderPackText',
    'replaySession',
    'runPerCall',
    'runTurns',
    'storeEvents',
    'stripArchivedBlocks',
    'summarizeTurn',
    'turnPayload',
  ],
  './guard': [
    'CompiledPattern',
    'DECLARED_TABLES',
    'DEFAULT_GUARD_DIR',
    'FindingSummary',
    'FoldFields',
    'GUARD_DECLARATION_SCHEMA',
    'GUARD_TABLE_VERSION',
    'GuardCaseResult',
    'GuardConformanceOptions',
    'GuardDeclaration',
    'GuardFamily',
    'GuardFinding',
    'GuardPattern',
    'GuardRunReport',
    'GuardScanResult',
    'GuardTable',
    'GuardTables',
    'GuardVerdict',
    'MatchSpan',
    'Matcher',
    'PAGE_TABLE_KINDS',
    'PageFinding',
    'RedactedBytes',
    'RedactedText',
    'Redactor',
    'RedactorOptions',
    'RegexSpec',
    'ScanFinding',
    'SecretDetector',
    'SecretDetectorOptions',
    'SecretHit',
    'Severity',
    'SyncMatch',
    'TableKind',
    'TextRedaction',
    'VerdictCounts',
    'buildGuardDeclaration',
    'checkGuardDeclaration',
    'defaultRedactor',
    'loadGuardTables',
    'pageWarning',
    'redactionMarker',
    'renderPageContent',
    'runGuardConformance',
    'scanInput',
    'scanPage',
    'scanText',
    'summarizeFindings',
    'validateGuardDeclaration',
  ],
  './protocol': [
    'BrokenReferenceError',
    'ColdNode',
    'ContextFoldError',
    'DEFAULT_POLICY',
    'DEFAULT_SESSION_ID',
    'DropReason',
    'DroppedTerm',
    'ErrorCode',
    'ErrorDetails',
    'EvictionLogFile',
    'FindingSummary',
    'FoldedStep',
    'GuardTableError',
    'HydrationPolicy',
    'IPCF_VERSION',
    'IndexEntry',
    'IntegrityCheckError',
    'JsonValue',
    'KeyMatch',
    'LineRange',
    'LockTimeoutError',
    'NodeNotFoundError',
    'OrphanedNodeError',
    'PROJECTION_VERSION',
    'Page',
    'PageFinding',
    'PageInFailure',
    'PageWindow',
    'PathContainmentError',
    'PayloadEncoding',
    'PromptIntent',
    'RecallCandidate',
    'RecallIndexFile',
    'RecallResult',
    'RecallStatus',
    'RedactionRecord',
    'RetrievalMode',
    'ScanPick',
    'ScanResult',
    'Severity',
    'StepConflictError',
    'StoreNotFoundError',
    'StoreUnavailableError',
    'UsageError',
    'canonicalJson',
    'canonicalSha256',
    'compareCodePoints',
    'exitCodeFor',
    'ipcfErrorName',
    'isBrokenReferenceError',
    'isContextFoldError',
    'isGuardTableError',
    'isIntegrityCheckError',
    'isLockTimeoutError',
    'isNodeNotFoundError',
    'isOrphanedNodeError',
    'isPathContainmentError',
    'isStepConflictError',
    'isStoreNotFoundError',
    'isStoreUnavailableError',
    'isUsageError',
    'parsePolicy',
    'policyHash',
    'prettyJson',
    'sha256Hex',
    'sortedUnique',
  ],
  './extract': [
    'ExplicitTerms',
    'ExtractedTerms',
    'Projection',
    'ProjectionInput',
    'Tokenizer',
    'extractTerms',
    'foldToken',
    'identifiersOf',
    'nodeTerms',
    'o200kTokenizer',
    'project',
    'queryTerms',
    'referenceTokenizer',
    'resolveTokenizer',
  ],
  './ai-sdk': [
    'ContextFoldMiddleware',
    'ContextFoldMiddlewareOptions',
    'ConvertedPrompt',
    'PROVIDER_OPTIONS_KEY',
    'contextFoldMiddleware',
    'fromNeutral',
    'messageKey',
    'outputText',
    'packToPrompt',
    'toNeutral',
  ],
  './mcp': [
    'ContextFoldMcpServer',
    'MCP_TOOL_NAMES',
    'McpServerOptions',
    'RegisteredTools',
    'createContextFoldMcpServer',
    'registerContextFoldTools',
    'runStdioServer',
    'toolError',
  ],
  './claude-code': [
    'ArchivedContext',
    'ArchivedContextOptions',
    'CLAUDE_EVENT_NAMES',
    'CONTEXT_HEADER',
    'DEFAULT_MAX_TURNS_PER_RUN',
    'HOOK_EVENTS',
    'HOOK_TIMEOUTS',
    'HookChange',
    'HookEvent',
    'HookInput',
    'HookOutcome',
    'HookOutput',
    'HookPage',
    'HookRuntime',
    'HookRuntimeOptions',
    'INGEST_STATE_VERSION',
    'IngestOptions',
    'IngestResult',
    'IngestState',
    'InstallResult',
    'InstallScope',
    'MAX_CONTEXT_BYTES',
    'RunHookOptions',
    'RuntimeKind',
    'SessionPaths',
    'SkippedRow',
    'UninstallResult',
    'archivedContext',
    'hookCommand',
    'ingestTranscript',
    'installClaudeCode',
    'parseHookInput',
    'resolveHookCommand',
    'runHook',
    'sessionPaths',
    'settingsPath',
    'uninstallClaudeCode',
  ],
  './proxy': [
    'ApiKind',
    'CallOutcome',
    'CallTimes',
    'Endpoint',
    'ProxyLogLine',
    'ProxyOptions',
    'RunningProxy',
    'SESSION_HEADER',
    'errorBody',
    'humanLogLine',
    'isLoopback',
    'sessionStoreDir',
    'startProxy',
  ],
  './import': [
    'BuilderMessage',
    'COMPACT_SUMMARY_LABEL',
    'ConversationBuilder',
    'ConversationState',
    'IMPORT_FORMATS',
    'ImportFormat',
    'ImportTurnsOptions',
    'ImportTurnsResult',
    'ImportedTurn',
    'LoadedHistory',
    'MessagePart',
    'OpenTurn',
    'OpenTurnSegment',
    'ParseTurnsOptions',
    'ParsedHistory',
    'ParsedTranscript',
    'StepIdRule',
    'TranscriptReader',
    'TranscriptState',
    'TurnRole',
    'TurnsRow',
    'foldInputsFor',
    'historyRecordRow',
    'importFile',
    'importTurns',
    'loadHistoryFile',
    'parseAiderHistory',
    'parseAnthropicMessages',
    'parseClaudeCodeTranscript',
    'parseCodexRollout',
    'parseHistory',
    'parseOpenAiMessages',
    'parseSweAgentTrajectory',
    'parseTurnsJsonl',
    'readHistoryRecords',
    'readSourceText',
    'readTurnsJsonl',
    'redactedFoldInputs',
  ],
  './inspect': [
    'DiskResponse',
    'ErrorResponse',
    'HashView',
    'Inspector',
    'InspectorOptions',
    'LayerTokens',
    'NodeResponse',
    'NodeRow',
    'NodesResponse',
    'OverviewResponse',
    'PackLayerView',
    'PackMessageView',
    'PackResponse',
    'PackSegment',
    'PayloadResponse',
    'PayloadSegment',
    'ProblemView',
    'RecallResponse',
    'ScanPickView',
    'ScanResponse',
    'StoreInfo',
    'StoresResponse',
    'TimelineResponse',
    'TimelineRow',
    'ValidateResponse',
    'WarningView',
    'browserCommand',
    'discoverStores',
    'openBrowser',
    'openBrowserPrivately',
    'startInspector',
  ],
  './conformance': [
    'CaseClass',
    'CaseDoc',
    'CaseInput',
    'CaseOutcome',
    'DEFAULT_CASE_CLOCK',
    'DEFAULT_CORPUS_DIR',
    'Declaration',
    'LIBRARY_REQUIREMENTS',
    'LIBRARY_STRICTNESSES',
    'LibrarySubject',
    'Manifest',
    'ObservedVerdict',
    'OperationParams',
    'OperationResult',
    'REQUIREMENT_IDS',
    'RequirementId',
    'RunOptions',
    'RunReport',
    'SUBJECT_PROTOCOL',
    'ScriptStep',
    'SpawnSubjectOptions',
    'StepExpectation',
    'StrictnessAllowance',
    'Subject',
    'SubjectHello',
    'SubjectProtocolError',
    'SubjectRequest',
    'SubjectResponse',
    'Verdict',
    'buildDeclaration',
    'corpusContentHash',
    'formatReport',
    'loadCaseDoc',
    'loadCaseInputs',
    'loadManifest',
    'runConformance',
    'serveSubject',
    'spawnSubject',
    'validateDeclaration',
  ],
  './acceptance': [
    'AcceptanceCase',
    'AcceptanceOptions',
    'AcceptanceReport',
    'AdapterDeclaration',
    'AdapterRun',
    'AdapterSubject',
    'AnchorContext',
    'AnchorState',
    'CallExpect',
    'CallObservation',
    'CallResult',
    'CaseFile',
    'CaseInputDoc',
    'DEFAULT_CASE_FILE',
    'Deviation',
    'FloorOutcome',
    'HistoryTurn',
    'LoadedCaseFile',
    'MODEL_REPLY',
    'ParsedPage',
    'ProcessSubjectOptions',
    'ScoredCase',
    'SourceAnchor',
    'StoreAction',
    'StoreExpect',
    'StoreSnapshot',
    'StoredNode',
    'StrictnessAllowance',
    'SubjectCase',
    'SubjectCaseOptions',
    'WARMUP_PROMPT',
    'adapterDeclarationJsonSchema',
    'adapterDeclarationSchema',
    'buildAdapterDeclaration',
    'caseFileJsonSchema',
    'caseFileSchema',
    'checkAnchor',
    'defaultSubjects',
    'deriveCall',
    'formatAdapterTable',
    'loadCaseFile',
    'parsePages',
    'runAdapterAcceptance',
    'scoreRun',
    'validateAdapterDeclaration',
  ],
};

/** package.json `exports` → the source barrel each built entry point comes from. */
function entryPoints(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { import: string }>;
  };
  const out: Record<string, string> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === 'string') continue; // ./package.json
    const m = /^\.\/dist\/(.+)\.js$/.exec(target.import);
    if (!m) throw new Error(`unexpected export target ${target.import}`);
    out[key] = join(ROOT, 'src', `${m[1]}.ts`);
  }
  return out;
}

interface Surface {
  names: string[];
  values: string[];
  /** The exported functions and classes (what a reader calls or constructs). */
  functionsAndClasses: string[];
  undocumented: string[];
  withoutExample: (name: string) => boolean;
}

const surfaces = new Map<string, Surface>();
/** `Type (file) <- entry Owner`: a named type of src/ that a public signature uses, exported nowhere. */
const signatureGaps: string[] = [];

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The symbol an export names (through a re-export). */
function targetOf(checker: ts.TypeChecker, sym: ts.Symbol): ts.Symbol {
  return sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym;
}

function docOf(checker: ts.TypeChecker, sym: ts.Symbol): { doc: string; example: boolean } {
  const target = targetOf(checker, sym);
  const doc = ts.displayPartsToString(target.getDocumentationComment(checker)).trim();
  const example = target.getJsDocTags(checker).some((t) => t.name === 'example');
  return { doc, example };
}

/**
 * A class member its users reach (subclasses included): anything not `private`, `#private` or
 * `@internal` (tsconfig.build.json strips those from the published declarations).
 */
function isReachable(member: ts.ClassElement): boolean {
  if (member.name && ts.isPrivateIdentifier(member.name)) return false;
  if (ts.getJSDocTags(member).some((t) => t.tagName.text === 'internal')) return false;
  return (ts.getCombinedModifierFlags(member) & ts.ModifierFlags.Private) === 0;
}

/** The parts of a function-like declaration a caller sees: type parameters, parameter types, return type. */
function signatureParts(d: ts.SignatureDeclarationBase): (ts.Node | undefined)[] {
  return [...(d.typeParameters ?? []), ...d.parameters.map((p) => p.type), d.type];
}

/**
 * What a public declaration exposes: a function's signature; a class's heritage, and the
 * signatures and types of its reachable members; an interface or type alias whole.
 */
function publicParts(d: ts.Declaration): (ts.Node | undefined)[] {
  if (ts.isFunctionDeclaration(d)) return signatureParts(d);
  if (ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d)) return [d];
  if (!ts.isClassDeclaration(d)) return [];
  const members = d.members.filter(isReachable).flatMap((m) => {
    if (ts.isPropertyDeclaration(m)) return [m.type];
    if (ts.isIndexSignatureDeclaration(m)) return [...m.parameters.map((p) => p.type), m.type];
    return ts.isFunctionLike(m) ? signatureParts(m) : [];
  });
  return [...(d.typeParameters ?? []), ...(d.heritageClauses ?? []), ...members];
}

/** Every exported symbol's public parts, checked for named types of src/ no entry point exports. */
function findSignatureGaps(checker: ts.TypeChecker, exported: Map<string, ts.Symbol[]>): string[] {
  const reachable = new Set([...exported.values()].flat());
  const src = join(ROOT, 'src/');
  const gaps = new Set<string>();
  const visit = (node: ts.Node | undefined, owner: string): void => {
    if (!node) return;
    const name = ts.isTypeReferenceNode(node)
      ? node.typeName
      : ts.isExpressionWithTypeArguments(node)
        ? node.expression
        : undefined;
    const sym = name && checker.getSymbolAtLocation(name);
    const target = sym && targetOf(checker, sym);
    const file = target?.declarations?.[0]?.getSourceFile().fileName;
    const isTypeParameter = target && (target.flags & ts.SymbolFlags.TypeParameter) !== 0;
    if (target && file?.startsWith(src) && !isTypeParameter && !reachable.has(target)) {
      gaps.add(`${target.name} (${file.slice(ROOT.length)}) <- ${owner}`);
    }
    ts.forEachChild(node, (child) => visit(child, owner));
  };
  for (const [key, symbols] of exported) {
    for (const s of symbols) {
      for (const d of s.declarations ?? []) {
        for (const part of publicParts(d)) visit(part, `${key} ${s.name}`);
      }
    }
  }
  return [...gaps].sort(compare);
}

beforeAll(() => {
  const entries = entryPoints();
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram(Object.values(entries), { ...parsed.options, noEmit: true });
  const checker = program.getTypeChecker();
  const exported = new Map<string, ts.Symbol[]>();
  for (const [key, file] of Object.entries(entries)) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`${key}: no source barrel ${file}`);
    const mod = checker.getSymbolAtLocation(source);
    if (!mod) throw new Error(`${key}: ${file} is not a module`);
    const exports = checker.getExportsOfModule(mod);
    exported.set(
      key,
      exports.map((s) => targetOf(checker, s)),
    );
    const docs = new Map(exports.map((s) => [s.name, docOf(checker, s)]));
    const named = (flags: ts.SymbolFlags) =>
      exports
        .filter((s) => (targetOf(checker, s).flags & flags) !== 0)
        .map((s) => s.name)
        .sort(compare);
    surfaces.set(key, {
      names: exports.map((s) => s.name).sort(compare),
      values: named(ts.SymbolFlags.Value),
      functionsAndClasses: named(ts.SymbolFlags.Function | ts.SymbolFlags.Class),
      undocumented: [...docs].filter(([, d]) => d.doc === '').map(([n]) => n),
      withoutExample: (name) => !docs.get(name)?.example,
    });
  }
  signatureGaps.push(...findSignatureGaps(checker, exported));
}, 60_000);

describe('the export surface', () => {
  it('every entry point of package.json is pinned here, and nothing else', () => {
    expect(Object.keys(entryPoints()).sort(compare)).toEqual(Object.keys(EXPECTED).sort(compare));
  });

  it.each(Object.keys(EXPECTED))('%s exports exactly the pinned names', (key) => {
    expect(surfaces.get(key)?.names).toEqual(EXPECTED[key]);
  });

  it.each(Object.keys(EXPECTED))('%s lists its names: no `export *`', (key) => {
    const text = readFileSync(entryPoints()[key]!, 'utf8');
    expect(text).not.toMatch(/export\s+(type\s+)?\*/);
  });

  it.each(Object.keys(EXPECTED))('the built %s exports exactly its value names', async (key) => {
    const dist = entryPoints()[key]!.replace(`${join(ROOT, 'src')}`, join(ROOT, 'dist'));
    const mod = (await import(dist.replace(/\.ts$/, '.js'))) as Record<string, unknown>;
    expect(Object.keys(mod).sort(compare)).toEqual(surfaces.get(key)?.values);
  });

  it(`the root stays small (≤ ${ROOT_LIMIT} names) and every root name is documented`, () => {
    const root = surfaces.get('.')!;
    expect(root.names.length).toBeLessThanOrEqual(ROOT_LIMIT);
    expect(root.undocumented).toEqual([]);
  });

  it('the main entry points carry an example', () => {
    const root = surfaces.get('.')!;
    for (const name of ['ContextFold', 'Session', 'repairStore', 'replaySession']) {
      expect(root.withoutExample(name), name).toBe(false);
    }
  });

  it('every public function and class of every entry point carries an @example', () => {
    const missing = [...surfaces].flatMap(([key, s]) =>
      s.functionsAndClasses.filter((name) => s.withoutExample(name)).map((n) => `${key} ${n}`),
    );
    expect(surfaces.size).toBe(Object.keys(EXPECTED).length);
    expect(missing).toEqual([]);
  });

  it('every named type a public signature uses is exported by some entry point', () => {
    // A public function, class (its non-private members), interface or type alias that names a
    // type of src/ no entry point exports: users cannot name what they pass or get back.
    expect(surfaces.size).toBe(Object.keys(EXPECTED).length);
    expect(signatureGaps).toEqual([]);
  });

  it('the demo, synthetic sessions and installer internals are not public', () => {
    const all = [...surfaces.values()].flatMap((s) => s.names);
    for (const name of [
      'runDemo',
      'demoHistory',
      'DEMO_QUESTIONS',
      'syntheticSession',
      'stableJson',
      'shellQuote',
      'mergeHooks',
    ]) {
      expect(all, name).not.toContain(name);
    }
  });
});
