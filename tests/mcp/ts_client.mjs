// Drives lean-beam-mcp with the official TypeScript SDK client (legacy family).
// argv: <command> <project root> [args...]; prints one JSON summary line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, project, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "pipe" });
let stderr = "";
transport.stderr?.on("data", (chunk) => { stderr += chunk.toString(); });
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
await client.connect(transport);
const tools = await client.listTools();
const version = await client.callTool({ name: "beam_version", arguments: {} });
const progress = [];
const sync = await client.callTool(
  { name: "lean_sync", arguments: { workspace: { root: project }, path: "100ms steps2" } },
  undefined,
  { onprogress: (p) => progress.push(p.progress) },
);
const bad = await client.callTool({ name: "lean_sync", arguments: { workspace: { root: "x" }, path: "a" } });
await client.ping();
await client.setLoggingLevel("warning");
await client.close();
await new Promise((r) => setTimeout(r, 300));
console.log(JSON.stringify({
  server: client.getServerVersion(),
  tools: tools.tools.map((t) => t.name),
  version: version.structuredContent,
  syncError: sync.isError,
  progress,
  badCode: bad.structuredContent?.code,
  stderr,
}));
