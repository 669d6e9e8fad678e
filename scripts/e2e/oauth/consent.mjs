// The consent page in headless Chromium (playwright-core, the system's
// chromium; no browser download): Allow, Deny and Switch account, signing
// in at the development identity provider. Prints one JSON line for the Go
// test (app/oauth_e2e_test.go) that runs it.
import { chromium } from 'playwright-core'
import assert from 'node:assert/strict'
import http from 'node:http'
import crypto from 'node:crypto'

const issuer = process.env.ISSUER
const resource = process.env.RESOURCE

// The assistant's loopback redirect: records what comes back.
const received = []
const server = http.createServer((req, res) => {
  // Only the redirect path counts: the browser also asks for /favicon.ico.
  const u = new URL(req.url, 'http://127.0.0.1')
  if (u.pathname === '/cb') received.push(u)
  res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="done">back at the assistant</p>')
})
await new Promise(r => server.listen(0, '127.0.0.1', r))
const port = server.address().port
const redirectURI = `http://127.0.0.1:${port}/cb`

async function register(name) {
  const r = await fetch(`${issuer}/oidc/register`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirectURI], application_type: 'native' }) })
  assert.equal(r.status, 201)
  return (await r.json()).client_id
}

function authorizeURL(clientID, state) {
  const verifier = crypto.randomBytes(32).toString('base64url')
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url')
  return `${issuer}/oidc/authorize?` + new URLSearchParams({ client_id: clientID, redirect_uri: redirectURI, response_type: 'code',
    scope: 'nanocorp', state, code_challenge: challenge, code_challenge_method: 'S256', resource }).toString()
}

async function signIn(page, email) {
  await page.waitForSelector('input[name=email]')
  await page.fill('input[name=email]', email)
  await page.fill('input[name=password]', 'correct horse battery')
  await page.fill('input[name=name]', email.split('@')[0])
  await Promise.all([page.waitForURL(u => u.pathname === '/oidc/authorize'), page.click('button')])
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'] })
const results = {}
try {
  const context = await browser.newContext()
  const page = await context.newPage()

  // Allow.
  const allowClient = await register('Playwright Allow')
  const first = await page.goto(authorizeURL(allowClient, 'allow-state'))
  await signIn(page, 'pw-ada@example.com')
  assert.match(await page.textContent('#client-name'), /Playwright Allow/)
  assert.match(await page.textContent('#client-status'), /Not verified/)
  assert.match(await page.textContent('#receiver'), new RegExp(`this computer, port ${port}`))
  assert.match(await page.textContent('#capability'), /act as you across all your businesses/)
  assert.match(await page.textContent('#account'), /pw-ada@example\.com/)
  const headers = await (await page.reload()).allHeaders()
  assert.match(headers['content-security-policy'], /frame-ancestors 'none'/)
  assert.ok(first)
  await Promise.all([page.waitForURL(u => u.port === String(port)), page.click('#allow')])
  const back = received.at(-1)
  assert.equal(back.searchParams.get('state'), 'allow-state')
  assert.equal(back.searchParams.get('iss'), issuer)
  assert.ok(back.searchParams.get('code'))
  results.allow = true

  // Deny: a self-registered client nobody approved stays on holdco's page.
  const denyClient = await register('Playwright Deny')
  await page.goto(authorizeURL(denyClient, 'deny-state'))
  assert.match(await page.textContent('#client-name'), /Playwright Deny/)
  await Promise.all([page.waitForLoadState(), page.click('#deny')])
  await page.waitForSelector('#error-code')
  assert.equal(await page.textContent('#error-code'), 'access_denied')
  assert.ok(!received.some(u => u.searchParams.get('state') === 'deny-state'))
  results.deny = true

  // Switch account: sign out of the authorization server, sign in as
  // someone else, come back to the same request.
  const switchClient = await register('Playwright Switch')
  await page.goto(authorizeURL(switchClient, 'switch-state'))
  assert.match(await page.textContent('#account'), /pw-ada@example\.com/)
  await page.click('#switch')
  await signIn(page, 'pw-bob@example.com')
  assert.match(await page.textContent('#account'), /pw-bob@example\.com/)
  assert.match(await page.textContent('#client-name'), /Playwright Switch/)
  await Promise.all([page.waitForURL(u => u.port === String(port)), page.click('#allow')])
  assert.equal(received.at(-1).searchParams.get('state'), 'switch-state')
  results.switch = true
  results.switch_code = received.at(-1).searchParams.get('code')
  results.switch_client = switchClient
} finally {
  await browser.close()
  server.close()
}
console.log(JSON.stringify(results))
