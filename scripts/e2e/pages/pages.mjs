// holdco's own pages in headless Chromium (playwright-core, the system's
// chromium; no browser download), clicked as a user would:
//  1. login CSRF: a sandboxed tenant page links to an attacker's
//     /auth/callback and /oidc/callback (their own code and state); the
//     victim's browser, which did not start those sign-ins, is not signed
//     in on either origin;
//  2. the device approval (`holdco login --device`): sign in at the
//     development identity provider, land on the approval page (no
//     login_code in its address), click Approve;
//  3. the local domain checkout: click "Confirm the payment";
//  4. the same two forms posted from the sandboxed tenant page: refused.
// Prints one JSON line of results for the Go test (app/pages_e2e_test.go).
import { chromium } from 'playwright-core'
import assert from 'node:assert/strict'

const env = name => {
  const v = process.env[name]
  if (!v) throw new Error(`${name} is not set`)
  return v
}
const api = env('API'), tenant = env('TENANT'), deviceURL = env('DEVICE_URL'), checkoutURL = env('CHECKOUT_URL')

const browser = await chromium.launch({ executablePath: env('CHROMIUM'),
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'] })
const results = {}
try {
  const context = await browser.newContext()
  const page = await context.newPage()
  const cookieNames = async () => (await context.cookies()).map(c => c.name)

  // 1. Login CSRF from a tenant page, by top-level navigation.
  await page.goto(tenant)
  let [resp] = await Promise.all([page.waitForNavigation(), page.click('#api-callback')])
  results.api_callback_landing = page.url()
  results.api_callback_text = await page.textContent('body')
  results.api_callback_cookies = await cookieNames()

  await page.goto(tenant)
  ;[resp] = await Promise.all([page.waitForNavigation(), page.click('#oidc-callback')])
  results.oidc_callback_status = resp.status()
  results.oidc_callback_text = await page.textContent('body')
  results.oidc_callback_cookies = await cookieNames()

  // 2. The device approval, signing in on the way.
  await page.goto(deviceURL)
  // (Signed in already only if the login CSRF above worked.)
  if (new URL(page.url()).pathname !== '/auth/cli/device') {
    await page.waitForSelector('input[name=email]')
    await page.fill('input[name=email]', 'pw-bea@example.com')
    await page.fill('input[name=password]', 'correct horse battery')
    await page.fill('input[name=name]', 'Bea')
    await Promise.all([page.waitForURL(u => u.pathname === '/auth/cli/device'), page.click('button')])
  }
  results.device_page_url = page.url()
  await page.waitForSelector('button[value=approve]')
  ;[resp] = await Promise.all([page.waitForNavigation(), page.click('button[value=approve]')])
  results.device_status = resp.status()
  results.device_text = await page.textContent('body')
  results.signed_in_cookies = await cookieNames()

  // 3. The local domain checkout.
  await page.goto(checkoutURL)
  ;[resp] = await Promise.all([page.waitForNavigation(), page.click('button')])
  results.checkout_status = resp.status()
  results.checkout_text = await page.textContent('body')

  // 4. The same forms, posted from the sandboxed tenant page.
  await page.goto(tenant)
  ;[resp] = await Promise.all([page.waitForNavigation(), page.click('#device-approve')])
  results.tenant_device_status = resp.status()
  results.tenant_device_text = await page.textContent('body')
  await page.goto(tenant)
  ;[resp] = await Promise.all([page.waitForNavigation(), page.click('#checkout-confirm')])
  results.tenant_checkout_status = resp.status()
  results.tenant_checkout_text = await page.textContent('body')
  assert.ok(api)
} finally {
  await browser.close()
}
console.log(JSON.stringify(results))
