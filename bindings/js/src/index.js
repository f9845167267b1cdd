// @crawlcheck/sdk for Node: the core (crawlcheck.wasm) and the continuity
// check for the official MCP clients and the agent frameworks built on them.
export { load, instantiate, Core, CoreError, CrawlcheckError, RawJSON, OPS, MAX_REQUEST_BYTES } from "./core.js";
export { withPreflight, ContinuityRecord, ContinuityRefused, endpointOf } from "./preflight.js";
export { ItemRefused } from "./features.js";
export { PreflightError } from "./errors.js";
export { RecordLog } from "./log.js";
export { ERROR_CODES } from "./codes.js";
export { withContinuity, loadMcpToolsWithContinuity } from "./adapters.js";
export { pilotAckPath, uploadPending } from "./pilot.js";
