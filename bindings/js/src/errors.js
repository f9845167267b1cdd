// The SDK's error classes. Every error the SDK throws for a reason of its
// own derives from CrawlcheckError, so a caller catches one class and reads
// the core's code without matching message text; a TypeError is kept for
// an argument of the wrong kind (the caller's mistake, not a check's).

/**
 * The base class: `code` is the core's error code (one of ERROR_CODES,
 * docs/abi.md) when an answer of the core is the cause, this error's or the
 * one in its `cause`; otherwise null (a transport, a file, a refused call).
 */
export class CrawlcheckError extends Error {
  constructor(message, { code = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "CrawlcheckError";
    this.code = code ?? (cause instanceof CrawlcheckError ? cause.code : null);
  }
}

/**
 * The check could not be made or its result not kept (a lockfile that
 * cannot be read, a configuration the core refuses, a log that cannot be
 * written, a confirm the core does not approve): there is no record to go
 * by, and every call fails with this error.
 */
export class PreflightError extends CrawlcheckError {
  constructor(message, options) {
    super(message, options);
    this.name = "PreflightError";
  }
}
