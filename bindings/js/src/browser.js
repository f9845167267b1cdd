// @crawlcheck/sdk in a browser (no bundler needed): the core alone. The
// module runs under the package's own WASI shim and hashes with its own
// SHA-256; every op is the same as in Node.
export { load, instantiate, Core, CoreError, CrawlcheckError, RawJSON, OPS, MAX_REQUEST_BYTES, handoffRecordText } from "./core.js";
