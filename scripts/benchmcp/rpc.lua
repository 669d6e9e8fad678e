-- wrk script: one JSON-RPC request to the connector per call, as the
-- official clients send it on protocol 2026-07-28 (version header and
-- _meta, Mcp-Method, Mcp-Name for tools/call). HOLDCO_BENCH_TOKEN is the
-- OAuth access token; HOLDCO_BENCH_METHOD is tools/list or tools/call;
-- HOLDCO_BENCH_TOOL names the tool of a tools/call (its arguments: none).
local token = os.getenv("HOLDCO_BENCH_TOKEN") or ""
local method = os.getenv("HOLDCO_BENCH_METHOD") or "tools/list"
local tool = os.getenv("HOLDCO_BENCH_TOOL") or ""
local version = "2026-07-28"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Authorization"] = "Bearer " .. token
wrk.headers["Mcp-Protocol-Version"] = version
wrk.headers["Mcp-Method"] = method
local meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. version .. '","io.modelcontextprotocol/clientCapabilities":{}}'
local params = "{" .. meta .. "}"
if method == "tools/call" then
  wrk.headers["Mcp-Name"] = tool
  params = '{"name":"' .. tool .. '","arguments":{},' .. meta .. '}'
end
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"' .. method .. '","params":' .. params .. '}'

-- A request the connector refuses (an expired token, a protocol error)
-- must not count as throughput: wrk counts non-2xx, and an RPC error is
-- answered 200, so the bench checks one response by hand before the run.
