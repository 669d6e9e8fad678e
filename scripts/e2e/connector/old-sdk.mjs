// The older official client (@modelcontextprotocol/sdk 1.32.2) speaks the
// 2025 revisions: its initialize must be refused with -32022
// UnsupportedProtocolVersion, whose data lists the supported revision.
// Needs no token: the revision is checked before the bearer.
//
//   MCP_URL=http://localhost:8081 node old-sdk.mjs
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.MCP_URL;
if (!url) {
  console.error("MCP_URL is required");
  process.exit(2);
}

const client = new Client({ name: "holdco-e2e-old-sdk", version: "1.0.0" });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  console.error("FAIL: the 2025 client connected; the connector must refuse it with -32022");
  process.exit(1);
} catch (err) {
  const supported = err?.data?.supported;
  if (err?.code !== -32022 || !Array.isArray(supported) || !supported.includes("2026-07-28")) {
    console.error("FAIL: expected -32022 with data.supported [2026-07-28], got", err?.code, err?.message, JSON.stringify(err?.data));
    process.exit(1);
  }
  console.log(`ok: @modelcontextprotocol/sdk 1.32.2 refused with -32022 (requested ${err.data.requested}, supported ${supported.join(", ")})`);
} finally {
  await client.close().catch(() => {});
}
