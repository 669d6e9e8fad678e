// Opens a page that includes holdco's loader script in headless Chromium
// and waits until the browser has posted its page view.
//
//   node loader.mjs <chromium path> <page URL> <capture URL>
import { chromium } from "playwright-core";

const [executablePath, page, capture] = process.argv.slice(2);
if (!executablePath || !page || !capture) {
  console.error("usage: node loader.mjs <chromium> <page URL> <capture URL>");
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const p = await browser.newPage();
  const posted = p.waitForResponse((r) => r.url().startsWith(capture) && r.request().method() === "POST", { timeout: 20000 });
  await p.goto(page);
  const resp = await posted;
  console.log(JSON.stringify({ status: resp.status() }));
  if (resp.status() !== 200) process.exit(1);
} finally {
  await browser.close();
}
