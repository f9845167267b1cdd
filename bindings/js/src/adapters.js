export function withContinuity() { throw new Error("todo"); }
export function loadMcpToolsWithContinuity() { throw new Error("todo"); }
