// Consent page spoofing in headless Chromium (playwright-core, the
// system's chromium): a client_name with invisible or text-direction
// characters is refused at registration, and a redirect host with a
// Cyrillic letter (exаmple.com) is shown in ASCII (punycode) as the
// browser renders the page. Prints one JSON line for the Go test
// (app/oauth_e2e_test.go) that runs it.
import { chromium } from 'playwright-core'
import assert from 'node:assert/strict'
import crypto from 'node:crypto'

const issuer = process.env.ISSUER
const resource = process.env.RESOURCE
const results = {}

async function register(name, redirect, applicationType = 'web') {
  const r = await fetch(`${issuer}/oidc/register`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirect], application_type: applicationType }) })
  return { status: r.status, body: await r.json() }
}

// Registration refuses names that could pass for another.
for (const name of ['Cl\u200baude', '\u202eedualC', 'Claude\u2066', '\ufeffClaude']) {
  const r = await register(name, 'https://app.example/cb')
  assert.equal(r.status, 400, JSON.stringify(name))
  assert.equal(r.body.error, 'invalid_client_metadata')
  assert.match(r.body.error_description, /client_name must not contain invisible/)
}
results.names_refused = true

const redirect = 'https://ex\u0430mple.com/callback'
const reg = await register('Look-alike Assistant', redirect)
assert.equal(reg.status, 201, JSON.stringify(reg.body))
const verifier = crypto.randomBytes(32).toString('base64url')
const challenge = crypto.createHash('sha256').update(verifier).digest('base64url')
const authorize = `${issuer}/oidc/authorize?` + new URLSearchParams({ client_id: reg.body.client_id, redirect_uri: redirect,
  response_type: 'code', scope: 'nanocorp', state: 'spoof', code_challenge: challenge, code_challenge_method: 'S256', resource }).toString()

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'] })
try {
  const page = await (await browser.newContext()).newPage()
  await page.goto(authorize)
  await page.waitForSelector('input[name=email]')
  await page.fill('input[name=email]', 'pw-spoof@example.com')
  await page.fill('input[name=password]', 'correct horse battery')
  await Promise.all([page.waitForURL(u => u.pathname === '/oidc/authorize'), page.click('button')])
  await page.waitForSelector('#receiver')
  const receiver = await page.textContent('#receiver')
  assert.match(receiver, /https:\/\/xn--exmple-4nf\.com/)
  const text = await page.evaluate(() => document.body.innerText)
  assert.ok(!text.includes('\u0430'), 'no Cyrillic look-alike on the page: ' + text)
  assert.ok(!/\p{Cf}/u.test(text), 'no format characters on the page')
  assert.match(text, /Look-alike Assistant/)
  results.receiver = receiver.trim()
  results.ascii_hosts = true
} finally {
  await browser.close()
}
console.log(JSON.stringify(results))
