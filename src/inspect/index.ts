// `contextfold/inspect`: the read-only developer view (CONF-08) as a local web app.

export type * from './api-types.js';
export { browserCommand, openBrowser } from './open-browser.js';
export { type Inspector, type InspectorOptions, startInspector } from './server.js';
export { discoverStores } from './stores.js';
