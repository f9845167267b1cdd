// The framework adapters (spec §8): the check where the framework fetches a
// server's tool list, against the approved lockfile. No dependency beyond
// the framework itself: each adapter works on the objects the framework
// already made (@openai/agents and @langchain/mcp-adapters are optional peer
// dependencies, imported only when used).
//
// Both frameworks connect the MCP client themselves, so the adapters start
// on a connected client: the capture begins after the handshake, and the
// record's handshake facts are what the client kept of it (serverInfo,
// protocol version), not the bytes received. withPreflight, which wraps the
// client before it connects, records those bytes.

import { CrawlcheckError } from "./errors.js";
import { preflightConnected, continuityApi } from "./preflight.js";

/**
 * An @openai/agents MCP server (MCPServerStdio, MCPServerStreamableHttp,
 * connected) whose tools pass the check at every tool-list fetch. With the
 * server's cacheToolsList on, a fetch is answered from the current record's
 * list until the server announces a change. A tool the record withholds is
 * not handed to the model, and calling it raises ContinuityRefused with the
 * record.
 * @template S
 * @param {S} server
 * @param {string|URL|Uint8Array} lock
 * @param {object} [options] the continuity options (mode, policy, logPath, …)
 * @returns {S}
 */
export function withContinuity(server, lock, options = {}) {
  if (!server || typeof server.listTools !== "function" || typeof server.callTool !== "function") {
    throw new TypeError("crawlcheck: withContinuity needs an @openai/agents MCP server");
  }
  let starting = null;
  let started = null; // the gate, once started
  let fresh = false; // the start's check has not been handed out yet
  const gate = () => {
    starting ??= (async () => {
      const u = server.underlying ?? server;
      const g = await preflightConnected(u.session, u.transport, lock, options);
      fresh = true;
      started = g;
      return g;
    })();
    return starting;
  };
  const listTools = async () => {
    const g = await gate();
    const cached = server.cacheToolsList && !g.stale();
    if (!fresh && !cached) {
      await g.serial(async () => {
        await g.recheck().catch((e) => {
          g.err = e;
        });
      });
    }
    fresh = false;
    const { rec, obs } = await g.gate();
    return g.toolsOf(rec, obs);
  };
  const guarded = (method) =>
    async function (toolName, ...rest) {
      const g = await gate();
      const { rec } = await g.gate();
      if (!g.allowed(rec, toolName)) throw g.refusedTool(rec, toolName);
      return server[method](toolName, ...rest);
    };
  const overrides = {
    listTools,
    callTool: guarded("callTool"),
    callToolResult: guarded("callToolResult"),
  };
  let api = null;
  return new Proxy(server, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop];
      if (prop === "continuity") {
        if (started) return (api ??= continuityApi(started));
        return starting ? lazyApi(starting) : undefined;
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

// lazyApi is the continuity API of a gate still starting: no records yet;
// the methods wait for the start.
function lazyApi(starting) {
  const wait = (name) => async (...a) => continuityApi(await starting)[name](...a);
  return {
    records: [],
    record: null,
    consultation: null,
    instructions: undefined,
    confirm: wait("confirm"),
    confirmInstructions: wait("confirmInstructions"),
    recheck: wait("recheck"),
    tools: wait("tools"),
    assertAllowed: wait("assertAllowed"),
  };
}

/**
 * The LangChain tools of one MCP server (@langchain/mcp-adapters'
 * loadMcpTools), checked first: only the tools the record lets through are
 * loaded, and calling a tool the record (or a later re-check, after the
 * server announced a change) withholds raises ContinuityRefused with the
 * record through LangChain's tool error path.
 * @param {string} serverName the server's name (in a MultiServerMCPClient, its key)
 * @param {object} client a connected MCP Client, or a MultiServerMCPClient
 * @param {string|URL|Uint8Array} lock
 * @param {object} [options] the continuity options, and loadMcpTools' options under `load`
 * @returns {Promise<object[]>} the tools, with .continuity on the array
 */
export async function loadMcpToolsWithContinuity(serverName, client, lock, options = {}) {
  const { loadMcpTools } = await import("@langchain/mcp-adapters");
  const { load: loadOptions, ...continuity } = options;
  const mcp = typeof client?.getClient === "function" ? await client.getClient(serverName) : client;
  if (!mcp || typeof mcp.listTools !== "function") throw new CrawlcheckError(`crawlcheck: no connected MCP client for server ${JSON.stringify(serverName)}`);
  const g = await preflightConnected(mcp, mcp.transport, lock, continuity);
  const callTool = mcp.callTool.bind(mcp);
  // What loadMcpTools sees: the checked tools the record lets through, and a
  // callTool that asks the record (brought up to date) first.
  const checked = Object.create(mcp, {
    listTools: {
      value: async () => {
        const { rec, obs } = await g.gate();
        return { tools: g.toolsOf(rec, obs) };
      },
    },
    callTool: {
      value: async (params, ...rest) => {
        const { rec } = await g.gate();
        if (!g.allowed(rec, params.name)) throw g.refusedTool(rec, params.name);
        return callTool(params, ...rest);
      },
    },
  });
  const tools = await loadMcpTools(serverName, checked, loadOptions);
  // LangChain wraps an error of the client's callTool in its own
  // ToolException; the refusal is raised before that, from the tool. The
  // tool's MCP name is its name after loadMcpTools' prefix.
  const prefix = `${loadOptions?.additionalToolNamePrefix ? `${loadOptions.additionalToolNamePrefix}__` : ""}${loadOptions?.prefixToolNameWithServerName ? `${serverName}__` : ""}`;
  for (const tool of tools) {
    const mcpName = tool.name.slice(prefix.length);
    const func = tool.func;
    tool.func = async (...a) => {
      const { rec } = await g.gate();
      if (!g.allowed(rec, mcpName)) throw g.refusedTool(rec, mcpName);
      return func(...a);
    };
  }
  Object.defineProperty(tools, "continuity", { value: continuityApi(g), enumerable: false });
  return tools;
}
