// The framework adapters (spec §8): the check where the framework fetches a
// server's tool list, against the approved lockfile. No dependency beyond
// the framework itself: each adapter works on the objects the framework
// already made (@openai/agents and @langchain/mcp-adapters are optional peer
// dependencies, imported only when used).
//
// Each adapter takes the framework's server or client before it connects
// and connects it with the capture withPreflight uses on its transport, so
// the record is built from the handshake's bytes and is the one
// withPreflight, the Go preflight and `crawlcheck check` make
// (docs/decisions.md, "The adapters see the handshake"). Given a session
// already connected, an adapter still checks it, but the capture starts
// after the handshake: the record's handshake facts are what the client
// kept of it (serverInfo, protocol version), not the bytes received, and
// the instructions are not compared.

import { CrawlcheckError, PreflightError } from "./errors.js";
import { preflightConnected, preflightConnecting, continuityApi } from "./preflight.js";
import { handedList, readChecked } from "./features.js";

/**
 * An @openai/agents MCP server (MCPServerStdio, MCPServerStreamableHttp,
 * MCPServerSSE) whose tools pass the check at every tool-list fetch. Wrap
 * it before connect: the wrapper's connect() (or connectMcpServers') makes
 * the session with the capture on the server's transport, so the record
 * covers the handshake; wrapped once connected, the check starts at the
 * first fetch, blind to the handshake. With the server's cacheToolsList on,
 * a fetch is answered from the current record's list until the server
 * announces a change. A tool the record withholds is not handed to the
 * model, and calling it raises ContinuityRefused with the record.
 * @template S
 * @param {S} server
 * @param {string|URL|Uint8Array} lock
 * @param {object} [options] the continuity options (mode, policy, logPath, …)
 * @returns {S}
 */
export function withContinuity(server, lock, options = {}) {
  if (!server || typeof server.listTools !== "function" || typeof server.callTool !== "function" || typeof server.connect !== "function") {
    throw new TypeError("crawlcheck: withContinuity needs an @openai/agents MCP server");
  }
  const u = server.underlying ?? server;
  let starting = null;
  let started = null; // the gate, once started
  let fresh = false; // the start's check has not been handed out yet
  let api = null;
  const begin = (making) => {
    api = null;
    starting = making.then((g) => {
      fresh = true;
      started = g;
      return g;
    });
    return starting;
  };
  // The session's gate: the one connect() made, or (a server connected
  // before it was wrapped) one on the connected session.
  const gate = () => starting ?? begin(preflightConnected(u.session, u.transport, lock, options));
  const connect = async () => {
    started?.shutdown();
    started = null;
    const making = begin(preflightConnecting(lock, options, (capture) => connectCapturing(server, u, capture)));
    try {
      await making;
    } catch (e) {
      starting = null; // a later connect tries again
      await server.close().catch(() => {});
      throw e;
    }
  };
  const close = async () => {
    try {
      return await server.close();
    } finally {
      started?.shutdown();
    }
  };
  const listTools = async () => {
    const g = await gate();
    // A cached list is re-checked by the gate when a change was announced.
    const cached = server.cacheToolsList;
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
  // The server's resources (the agents MCP servers expose them, not
  // prompts): what the record covers, as withPreflight hands them over.
  const overrides = {
    connect,
    close,
    listTools,
    callTool: guarded("callTool"),
    callToolResult: guarded("callToolResult"),
    listResources: async (params) => handedList(await gate(), "resources", params),
    listResourceTemplates: async (params) => handedList(await gate(), "resource_templates", params),
    readResource: async (uri) => readChecked(await gate(), { uri }, () => server.readResource(uri)),
  };
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

/**
 * Runs the agents server's connect with capture called on the transport it
 * makes, before its client connects on it, and answers that client. The
 * server classes of @openai/agents (0.20) make the transport inside
 * connect: MCPServerStdio and MCPServerSSE assign it to their transport
 * field before the handshake, MCPServerStreamableHttp makes it with
 * createStreamableHttpTransport and assigns it only once connected; both
 * seams are taken for this connect alone. A transport made later (the
 * streamable HTTP reconnect after a broken session) is not captured: a
 * check after it has no list it saw, and does not proceed.
 */
async function connectCapturing(server, u, capture) {
  let seen = false;
  const take = (t) => {
    if (t && !seen) {
      seen = true;
      capture(t);
    }
    return t;
  };
  let held = u.transport;
  Object.defineProperty(u, "transport", { configurable: true, enumerable: true, get: () => held, set: (t) => void (held = take(t)) });
  const create = u.createStreamableHttpTransport;
  const own = Object.hasOwn(u, "createStreamableHttpTransport");
  if (typeof create === "function") {
    u.createStreamableHttpTransport = function (...a) {
      return take(create.apply(this, a));
    };
  }
  try {
    await server.connect();
  } finally {
    Object.defineProperty(u, "transport", { configurable: true, enumerable: true, writable: true, value: held });
    if (own) u.createStreamableHttpTransport = create;
    else delete u.createStreamableHttpTransport;
  }
  return u.session;
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
    confirmFeatures: wait("confirmFeatures"),
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
 * record through LangChain's tool error path. Given a Client before
 * connect and its transport (options.transport), the adapter connects it
 * with the capture on the transport, so the record covers the handshake;
 * given a connected Client or a MultiServerMCPClient (which connects its
 * clients itself), the check is blind to the handshake.
 * @param {string} serverName the server's name (in a MultiServerMCPClient, its key)
 * @param {object} client an MCP Client (before connect with options.transport, else connected), or a MultiServerMCPClient
 * @param {string|URL|Uint8Array} lock
 * @param {object} [options] the continuity options, the transport to connect the client with under `transport`, and loadMcpTools' options under `load`
 * @returns {Promise<object[]>} the tools, with .continuity on the array
 */
export async function loadMcpToolsWithContinuity(serverName, client, lock, options = {}) {
  const { loadMcpTools } = await import("@langchain/mcp-adapters");
  const { load: loadOptions, transport, ...continuity } = options;
  let mcp, g;
  if (transport) {
    mcp = client;
    if (!mcp || typeof mcp.connect !== "function" || typeof mcp.listTools !== "function") throw new TypeError("crawlcheck: options.transport connects an MCP Client: give the Client before connect");
    if (mcp.transport) throw new PreflightError("crawlcheck: the client is connected already: give it before connect with options.transport, or connected without it");
    g = await preflightConnecting(lock, continuity, async (capture) => {
      capture(transport);
      await mcp.connect(transport);
      return mcp;
    });
  } else {
    mcp = typeof client?.getClient === "function" ? await client.getClient(serverName) : client;
    if (!mcp || typeof mcp.listTools !== "function") throw new CrawlcheckError(`crawlcheck: no connected MCP client for server ${JSON.stringify(serverName)}`);
    g = await preflightConnected(mcp, mcp.transport, lock, continuity);
  }
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
