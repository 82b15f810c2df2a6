// `contextfold/inspect`: the read-only developer view (CONF-08) as a local web app.

export type {
  DiskResponse,
  ErrorResponse,
  HashView,
  LayerTokens,
  NodeResponse,
  NodeRow,
  NodesResponse,
  OverviewResponse,
  PackLayerView,
  PackMessageView,
  PackResponse,
  PackSegment,
  PayloadResponse,
  PayloadSegment,
  ProblemView,
  RecallResponse,
  ScanPickView,
  ScanResponse,
  StoreInfo,
  StoresResponse,
  TimelineResponse,
  TimelineRow,
  ValidateResponse,
  WarningView,
} from './api-types.js';
export { browserCommand, openBrowser, openBrowserPrivately } from './open-browser.js';
export { type Inspector, type InspectorOptions, startInspector } from './server.js';
export { discoverStores } from './stores.js';
