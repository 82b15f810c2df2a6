// The layering of src/ (architecture.md): imports only point down. `npm run lint` runs this.
// A layer may import its own folder and any layer of a lower rank; never a higher or equal one
// (siblings of one rank, e.g. two adapters, know nothing of each other).
const LAYERS = [
  ['protocol', 0],
  ['fs', 0],
  ['net', 0],
  ['extract', 1],
  ['guard', 2],
  ['store', 3],
  ['retrieval', 4],
  ['engine', 5],
  ['harness', 6],
  ['import', 7],
  ['adapters/ai-sdk', 8],
  ['adapters/mcp', 8],
  ['adapters/claude-code', 8],
  ['adapters/proxy', 8],
  ['inspect', 8],
  ['eval', 8],
  ['conformance', 8],
  ['acceptance', 9],
  ['cli', 10],
  ['bench', 10],
];

const NOT_TEST = '(\\.test\\.ts$|/test-utils/)';

const layerRules = LAYERS.map(([name, rank]) => {
  const forbidden = LAYERS.filter(([other, r]) => other !== name && r >= rank).map(([o]) => o);
  return {
    name: `layer-${name.replace('/', '-')}`,
    comment: `${name} (rank ${rank}) may not import a layer of the same or a higher rank`,
    severity: 'error',
    from: { path: `^src/${name}/`, pathNot: NOT_TEST },
    to: { path: `^src/(${forbidden.join('|')})/` },
  };
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      severity: 'error',
      from: { pathNot: NOT_TEST },
      to: { circular: true },
    },
    {
      name: 'no-test-code-in-production',
      comment: 'production code never imports tests or test helpers',
      severity: 'error',
      from: { path: '^src/', pathNot: NOT_TEST },
      to: { path: NOT_TEST },
    },
    {
      name: 'no-dev-dependency-at-runtime',
      comment:
        'production code imports only dependencies (or optional peers, in adapters); `import type` is erased at build time, so types of a dev dependency (an SDK request shape) are allowed',
      severity: 'error',
      from: { path: '^src/', pathNot: NOT_TEST },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['npm-peer', 'type-only'] },
    },
    {
      name: 'peers-only-in-adapters',
      comment: 'an optional peer (an SDK) is imported by its adapter (or the adapter acceptance subjects) only',
      severity: 'error',
      from: { path: '^src/', pathNot: `${NOT_TEST}|^src/(adapters|acceptance)/` },
      to: { dependencyTypes: ['npm-peer'] },
    },
    {
      name: 'barrel-is-not-a-layer',
      comment: 'only the package entry points import the root barrel src/index.ts',
      severity: 'error',
      from: { path: '^src/', pathNot: NOT_TEST },
      to: { path: '^src/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
