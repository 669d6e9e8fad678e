// Opens a company's page on holdco's sites listener (sandboxed: an opaque
// origin without cookies or storage) that includes the loader, in headless
// Chromium; waits for its page view, navigates inside the page
// (history.pushState) and waits for the second one. Prints the visitor ids
// the two events carried and the page's own errors.
//
//   node site.mjs <chromium path> <page URL> <capture URL>
import { chromium } from "playwright-core";

const [executablePath, page, capture] = process.argv.slice(2);
if (!executablePath || !page || !capture) {
  console.error("usage: node site.mjs <chromium> <page URL> <capture URL>");
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const out = { ids: [], statuses: [], errors: [] };
try {
  const p = await browser.newPage();
  p.on("pageerror", (e) => out.errors.push(String(e)));
  const posted = () => p.waitForRequest((r) => r.url().startsWith(capture) && r.method() === "POST", { timeout: 20000 });
  const record = async (req) => {
    const body = JSON.parse(req.postData());
    out.ids.push(body.distinct_id);
    const resp = await req.response();
    out.statuses.push(resp ? resp.status() : 0);
  };
  const first = posted();
  await p.goto(page);
  await record(await first);
  out.sandboxed_origin = await p.evaluate(() => self.origin);
  const second = posted();
  await p.evaluate(() => history.pushState({}, "", "second"));
  await record(await second);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
