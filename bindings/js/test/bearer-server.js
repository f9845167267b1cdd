// A streamable HTTP MCP server behind the TypeScript SDK's own bearer-token
// middleware (requireBearerAuth), for auth.test.js and the Python suite's
// test_auth.py: no token is a 401, the token "narrow-token" (which lacks the
// scope "tools") a 403 insufficient_scope, both with the WWW-Authenticate
// the SDK writes (its resource_metadata included). Any other token is
// invalid (401). It listens on a free loopback port and prints its URL.
import express from "express";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";

const app = express();
app.use(express.json());
const listener = app.listen(0, "127.0.0.1", () => {
  const base = `http://127.0.0.1:${listener.address().port}`;
  const verifier = {
    async verifyAccessToken(token) {
      if (token !== "narrow-token") throw new InvalidTokenError("Invalid token");
      return { token, clientId: "test-client", scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
    },
  };
  app.all("/mcp", requireBearerAuth({ verifier, requiredScopes: ["tools"], resourceMetadataUrl: `${base}/.well-known/oauth-protected-resource/mcp` }), async (req, res) => {
    const server = new McpServer({ name: "behind-login", version: "1.0.0" });
    server.registerTool("get_issue", { description: "Get one issue." }, async () => ({ content: [] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  process.stdout.write(`${base}/mcp\n`);
});
