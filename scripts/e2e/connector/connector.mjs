// End to end with the official TypeScript client pinned to 2026-07-28
// (@modelcontextprotocol/client 2.4.0) and the tasks extension
// (@modelcontextprotocol/ext-tasks 0.2.2):
//
//   1. OAuth: the client meets the connector's 401, reads the protected
//      resource metadata and the authorization server's metadata, registers
//      itself (/oidc/register), authorizes with PKCE S256 (consent approved
//      programmatically, see approve()), and exchanges the code at the token
//      endpoint it discovered. Skipped when E2E_BEARER holds a token
//      already (the Go test does that with its fake introspector).
//   2. tools/list, create_business, and whatever first_pass asks (wait for
//      provisioning, start_first_pass, let the first turn end).
//   3. send_message as a task, polled with tasks/get to completion.
//   4. another send_message as a task, cancelled with tasks/cancel: its turn
//      ends interrupted.
//
// Environment:
//   MCP_URL        the connector (required)
//   E2E_BEARER     an access token to use instead of running OAuth
//   E2E_IDEA       the idea of the business to create
//   E2E_EMAIL      who signs in on the authorization server's pages
//   E2E_PASSWORD   their password at the identity provider (a password
//                  field of a sign-in form gets it; the development
//                  provider makes a new account with it)
//   E2E_BUSINESS   the handle (or id) of an active business to use instead
//                  of creating one with create_business
//   E2E_CONSENT_MODULE  a module whose default export approve(url) returns
//                  the redirect URL carrying the code (replaces the
//                  built-in form walker)
//   E2E_TIMEOUT_MS overall limit (default 600000)
import http from "node:http";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient, resultFromTaskOutcome } from "@modelcontextprotocol/ext-tasks/client";

const PROTOCOL = "2026-07-28";
const mcpURL = process.env.MCP_URL;
if (!mcpURL) {
  console.error("MCP_URL is required");
  process.exit(2);
}
const timeout = setTimeout(() => fail(`no result within ${limitMs()} ms`), limitMs());
timeout.unref();
const clientInfo = { name: "holdco-e2e", version: "1.0.0" };

function limitMs() {
  return Number(process.env.E2E_TIMEOUT_MS || 600000);
}
function fail(...msg) {
  console.error("FAIL:", ...msg);
  process.exit(1);
}
function step(msg) {
  console.log(`- ${msg}`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- OAuth ---------------------------------------------------------------

// A loopback redirect (a native client) whose callback is never opened by
// a browser here: approve() stops at the redirect and reads its query.
class E2EProvider {
  constructor(redirectUrl) {
    this._redirectUrl = redirectUrl;
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this.authorizationUrl = undefined;
  }
  get redirectUrl() {
    return this._redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: "holdco e2e",
      redirect_uris: [this._redirectUrl],
      application_type: "native",
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "nanocorp",
    };
  }
  state() {
    return crypto.randomUUID();
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(info) {
    this._client = info;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v) {
    this._verifier = v;
  }
  codeVerifier() {
    return this._verifier;
  }
  // Kept with the verifier so the client checks, on the callback leg, that
  // the code goes to the authorization server it was issued by (SEP-2352).
  saveDiscoveryState(state) {
    this._discovery = state;
  }
  discoveryState() {
    return this._discovery;
  }
}

// approve walks the authorization server's pages as a browser would, with
// cookies: it follows redirects, fills each form (an email field gets
// E2E_EMAIL) and presses its approving button, until a redirect reaches
// the client's redirect URI.
async function approve(authorizationUrl, redirectUri) {
  if (process.env.E2E_CONSENT_MODULE) {
    const mod = await import(process.env.E2E_CONSENT_MODULE);
    return new URL(await mod.default(authorizationUrl.toString(), { redirectUri }));
  }
  const jar = new Map();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const remember = (res) => {
    for (const c of res.headers.getSetCookie?.() ?? []) {
      const [pair] = c.split(";");
      const i = pair.indexOf("=");
      jar.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
    }
  };
  let req = { url: authorizationUrl.toString(), method: "GET", body: undefined };
  for (let hop = 0; hop < 30; hop++) {
    if (req.url.startsWith(redirectUri)) return new URL(req.url);
    const res = await fetch(req.url, {
      method: req.method,
      redirect: "manual",
      headers: {
        cookie: cookieHeader(),
        ...(req.body ? { "content-type": "application/x-www-form-urlencoded", origin: new URL(req.url).origin } : {}),
      },
      body: req.body,
    });
    remember(res);
    if (res.status >= 300 && res.status < 400) {
      req = { url: new URL(res.headers.get("location"), req.url).toString(), method: "GET", body: undefined };
      continue;
    }
    const html = await res.text();
    if (res.status >= 400) fail(`the authorization page ${req.url} answered ${res.status}:`, html.slice(0, 500));
    const form = pickForm(html);
    if (!form) fail(`the authorization page ${req.url} (${res.status}) has no form to approve:`, html.slice(0, 500));
    req = { url: new URL(form.action || req.url, req.url).toString(), method: form.method, body: form.body };
    if (form.method === "GET") {
      const u = new URL(req.url);
      u.search = form.body;
      req = { url: u.toString(), method: "GET", body: undefined };
    }
  }
  fail("too many hops on the authorization pages");
}

function attr(tag, name) {
  const m = tag.match(new RegExp(`${name}\\s*=\\s*("([^"]*)"|'([^']*)')`, "i"));
  return m ? (m[2] ?? m[3]).replaceAll("&amp;", "&") : undefined;
}

// pickForm returns the first form with an approving (or sign-in) submit,
// its fields filled.
function pickForm(html) {
  const approving = /allow|approve|accept|authorize|continue|sign in|log in|login/i;
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const [, head, inner] = m;
    const fields = new URLSearchParams();
    let pressed = false;
    for (const t of inner.matchAll(/<(input|button)\b[^>]*>([^<]*)/gi)) {
      const tag = t[0];
      const name = attr(tag, "name");
      const type = (attr(tag, "type") || (t[1].toLowerCase() === "button" ? "submit" : "text")).toLowerCase();
      const value = attr(tag, "value") ?? "";
      if (type === "submit") {
        if (!pressed && approving.test(`${value} ${t[2]}`)) {
          if (name) fields.set(name, value);
          pressed = true;
        }
        continue;
      }
      if (!name) continue;
      if (type === "password") fields.set(name, process.env.E2E_PASSWORD || "correct horse battery");
      else if (/email|login|user/i.test(name) && !value) fields.set(name, process.env.E2E_EMAIL || "e2e@example.com");
      else if (type !== "checkbox" || /checked/i.test(tag)) fields.set(name, value);
    }
    if (pressed) return { action: attr(head, "action"), method: (attr(head, "method") || "GET").toUpperCase(), body: fields.toString() };
  }
  return undefined;
}

async function oauth(client) {
  const server = http.createServer((_, res) => res.end("holdco e2e: authorized, you may close this page"));
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const redirectUri = `http://127.0.0.1:${server.address().port}/callback`;
  const provider = new E2EProvider(redirectUri);
  try {
    let transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider });
    try {
      await client.connect(transport);
      fail("the connector answered without a token");
    } catch (err) {
      if (!(err instanceof UnauthorizedError) || !provider.authorizationUrl) throw err;
    }
    step(`registered as ${provider.clientInformation()?.client_id}; authorizing with PKCE`);
    const back = await approve(provider.authorizationUrl, redirectUri);
    if (back.searchParams.get("error")) fail("authorization refused:", back.search);
    await transport.finishAuth(back.searchParams);
    const token = provider.tokens()?.access_token;
    if (!token) fail("no access token from the token endpoint");
    const issuer = provider.discoveryState()?.authorizationServerMetadata?.issuer;
    if (back.searchParams.get("iss") !== issuer) fail(`iss ${back.searchParams.get("iss")} is not the issuer ${issuer}`);
    step(`token from ${issuer}'s token endpoint (scope ${provider.tokens().scope})`);
    return token;
  } finally {
    server.close();
  }
}

// ---- the connector -------------------------------------------------------

function newClient() {
  return new Client(clientInfo, { capabilities: {}, versionNegotiation: { mode: { pin: PROTOCOL } } });
}

function toolJSON(result) {
  const text = result.content?.find((c) => c.type === "text")?.text;
  return result.structuredContent ?? (text ? JSON.parse(text) : undefined);
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  const body = toolJSON(res);
  if (res.isError) fail(`${name} refused:`, JSON.stringify(body));
  return body;
}

// rawDispatch posts one JSON-RPC request as a 2026-07-28 client does (the
// tasks package frames _meta; the headers are the transport's part).
function rawDispatch(token) {
  let id = 1000;
  return async (request, options = {}) => {
    const body = { jsonrpc: "2.0", id: id++, ...request };
    const name = request.method === "tools/call" ? request.params?.name : request.params?.taskId;
    const headers = new Headers({
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      "mcp-protocol-version": PROTOCOL,
      "mcp-method": request.method,
    });
    if (name) headers.set("mcp-name", name);
    for (const [k, v] of Object.entries(options.context?.headers ?? {})) headers.set(k, v);
    const res = await fetch(mcpURL, { method: "POST", signal: options.signal, headers, body: JSON.stringify(body) });
    const msg = await res.json();
    return msg.error ? { kind: "error", error: msg.error } : { kind: "result", result: msg.result };
  };
}

async function main() {
  let token = process.env.E2E_BEARER;
  if (!token) token = await oauth(newClient());
  const client = newClient();
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpURL), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  step(`connected at ${PROTOCOL}`);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  if (names.join() !== [...names].sort().join()) fail("tools/list is not sorted by name");
  for (const n of ["create_business", "send_message", "get_turn", "interrupt_turn"]) if (!names.includes(n)) fail(`no tool ${n}`);
  step(`tools/list: ${names.length} tools`);

  let business = process.env.E2E_BUSINESS;
  if (business) {
    const b = await call(client, "get_business", { business });
    if (b.status !== "active" || !b.ready) fail(`E2E_BUSINESS ${business} is not active and ready:`, JSON.stringify(b));
    step(`using ${b.handle} (E2E_BUSINESS) instead of create_business`);
  } else {
    const idea = process.env.E2E_IDEA || `A newsletter about houseplants (e2e ${Date.now()})`;
    const created = await call(client, "create_business", { idea });
    business = created.business.handle;
    step(`created ${business}; first_pass ${created.first_pass.status}`);
    await settleFirstPass(client, business, created.first_pass);
  }

  const session = createTaskSessionFromClient(client, {
    endpointId: "holdco-e2e",
    rawDispatch: rawDispatch(token),
    v2RequestFraming: { protocolVersion: PROTOCOL, clientInfo, clientCapabilities: {} },
  });
  try {
    const exec = await session.callTool("send_message", { business, message: "What should we do first? Answer briefly." });
    if (exec.kind !== "task") fail("send_message did not answer a task");
    step(`task ${exec.handle.taskId}: polling`);
    const { outcome } = await exec.settle();
    const result = resultFromTaskOutcome(outcome);
    const turn = toolJSON(result);
    if (result.isError || !["completed", "waiting"].includes(turn.status)) fail("the task did not complete:", JSON.stringify(result));
    step(`task completed: turn ${turn.status}, ${turn.credits_cost} credits`);

    const long = await session.callTool("send_message", { business, message: "Write a long, detailed plan; take your time." });
    if (long.kind !== "task") fail("the second send_message did not answer a task");
    await long.cancel();
    let status;
    for (let i = 0; i < 30; i++) {
      status = (await call(client, "get_turn", { turn_id: long.handle.taskId })).status;
      if (status !== "queued" && status !== "running") break;
      await sleep(1000);
    }
    if (status !== "interrupted") fail(`the cancelled task's turn is ${status}, not interrupted`);
    step(`task ${long.handle.taskId} cancelled: turn interrupted`);
  } finally {
    await session.close();
  }
  await client.close();
  console.log(
    `ok: ${process.env.E2E_BEARER ? "the given token" : "OAuth"}, ${process.env.E2E_BUSINESS ? "the given business" : "create_business"}, a task polled to completion, a task cancelled`,
  );
}

// settleFirstPass waits until the new business has no turn running.
async function settleFirstPass(client, business, fp) {
  for (let round = 0; round < 5; round++) {
    switch (fp.status) {
      case "skipped":
        return;
      case "started":
        await waitTurn(client, fp.turn_id);
        return;
      case "provisioning":
        for (;;) {
          const b = await call(client, "get_business", { business });
          if (b.ready) break;
          await sleep(5000);
        }
        fp = (await call(client, "start_first_pass", { business })).first_pass;
        step(`start_first_pass: ${fp.status}`);
        continue;
      case "not_started":
        if (fp.error === "conflict" && fp.turn_id) {
          await waitTurn(client, fp.turn_id);
          return;
        }
        fail("the first turn did not start:", JSON.stringify(fp));
    }
  }
  fail("first_pass did not settle:", JSON.stringify(fp));
}

async function waitTurn(client, turnID) {
  for (;;) {
    const t = await call(client, "get_turn", { turn_id: turnID });
    if (!["queued", "running"].includes(t.status)) {
      step(`first turn ${t.status}`);
      return;
    }
    await sleep(3000);
  }
}

main().catch((err) => fail(err?.stack || err));
