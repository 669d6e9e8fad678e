// The REST reference (/docs) in headless Chromium with every request to
// another origin blocked (as offline): Stoplight Elements, served from
// holdco's binary, renders the OpenAPI document. Prints one JSON line for
// the Go test (app/docs_e2e_test.go) that runs it.
import { chromium } from 'playwright-core'

const base = process.env.BASE
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'] })
const out = { blocked: [], errors: [] }
try {
  const context = await browser.newContext()
  await context.route('**/*', (route) => {
    const u = route.request().url()
    if (u.startsWith(base + '/') || u.startsWith('data:')) return route.continue()
    out.blocked.push(u)
    return route.abort()
  })
  const page = await context.newPage()
  page.on('pageerror', (e) => out.errors.push(String(e)))
  page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()) })
  page.on('requestfailed', (r) => out.errors.push('failed: ' + r.url()))
  await page.goto(base + '/docs')
  try {
    // The sidebar lists the document's tags and schemas once rendered.
    await page.waitForFunction(() => /ENDPOINTS/i.test(document.body.innerText) && document.body.innerText.includes('AnalyticsSummary'), null, { timeout: 30000 })
    out.rendered = true
  } catch (e) {
    out.rendered = false
    out.body = (await page.evaluate(() => document.body.innerText)).slice(0, 500)
  }
} finally {
  await browser.close()
}
console.log(JSON.stringify(out))
