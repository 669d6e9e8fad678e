// Runs posthog-js's real capture code in a jsdom window against holdco:
// page views (with a referrer and UTM parameters) posted to
// <base>/analytics/e/ the way browsers post them.
//
//   node posthog.mjs <holdco base URL> <company analytics key> <page views>
import { JSDOM } from "jsdom";

const [base, key, count = "3"] = process.argv.slice(2);
if (!base || !key) {
  console.error("usage: node posthog.mjs <base URL> <key> [page views]");
  process.exit(2);
}
const dom = new JSDOM("<!doctype html><html><head><title>Shop</title></head><body></body></html>", {
  url: "https://shop.example/?utm_source=newsletter&utm_campaign=launch",
  referrer: "https://news.example/story",
  pretendToBeVisual: true,
});
const w = dom.window;
// posthog-js reads the browser's globals when it loads.
for (const k of ["window", "document", "navigator", "location", "localStorage", "sessionStorage", "XMLHttpRequest", "screen", "history"]) {
  Object.defineProperty(globalThis, k, { value: w[k], configurable: true, writable: true });
}
const mod = await import("posthog-js");
const posthog = [mod.default, mod.default?.default, mod.posthog].find((p) => typeof p?.init === "function");

const sent = [];
const failures = [];
await new Promise((resolve) => {
  posthog.init(key, {
    api_host: base + "/analytics",
    autocapture: false,
    capture_pageview: true,
    capture_pageleave: false,
    disable_session_recording: true,
    advanced_disable_flags: true,
    advanced_disable_decide: true,
    disable_surveys: true,
    persistence: "localStorage",
    request_batching: true,
    on_request_error: (r) => failures.push(r.statusCode),
    loaded: () => resolve(),
  });
});
posthog.on?.("eventCaptured", (e) => sent.push(e.event));
for (let i = 1; i < Number(count); i++) {
  w.history.pushState({}, "", "/page-" + i);
  posthog.capture("$pageview");
}
// Let the request queue flush (it sends every few seconds) and close it.
await new Promise((r) => setTimeout(r, 4000));
posthog._requestQueue?.unload?.();
await new Promise((r) => setTimeout(r, 1000));
if (failures.length > 0) {
  console.error("capture requests failed with status", failures);
  process.exit(1);
}
console.log(JSON.stringify({ distinct_id: posthog.get_distinct_id(), captured: sent.length }));
process.exit(0);
