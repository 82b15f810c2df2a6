/**
 * The contextfold MCP server (`@modelcontextprotocol/sdk` 1.x): recall, verified hydration,
 * prompt scan, fold, status and validation of one store as MCP tools.
 *
 * @example
 * import { runStdioServer } from 'contextfold/mcp';
 * await runStdioServer({ dir: '.contextfold' });
 */
export {
  type ContextFoldMcpServer,
  createContextFoldMcpServer,
  type McpServerOptions,
  runStdioServer,
} from './server.js';
export {
  MCP_TOOL_NAMES,
  type RegisteredTools,
  registerContextFoldTools,
  toolError,
} from './tools.js';
