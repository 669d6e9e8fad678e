// The full authorization code flow against holdco's authorization server
// with oauth4webapi as the client: discovery, dynamic registration,
// sign-in at the development identity provider, consent, code exchange
// with PKCE, and the checks of iss, state and the verifier. Prints one
// JSON line for the Go test (app/oauth_e2e_test.go) that runs it.
import * as oauth from 'oauth4webapi'
import assert from 'node:assert/strict'
import { Browser, hidden } from './browser.mjs'

const issuer = new URL(process.env.ISSUER)
const resource = process.env.RESOURCE
const email = process.env.EMAIL ?? 'e2e@example.com'
const opts = { [oauth.allowInsecureRequests]: true } // the test servers speak http

const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...opts, algorithm: 'oauth2' }))
assert.equal(as.issuer, issuer.href.replace(/\/$/, ''))
assert.deepEqual(as.code_challenge_methods_supported, ['S256'])
assert.equal(as.authorization_response_iss_parameter_supported, true)

const redirectURI = 'http://127.0.0.1:7777/callback'
const client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, {
  client_name: 'oauth4webapi e2e', redirect_uris: [redirectURI], application_type: 'native',
  token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
}, opts))
assert.ok(client.client_id)
assert.equal(client.client_secret, undefined)

const browser = new Browser()
const toClient = u => u.startsWith('http://127.0.0.1:7777/')

async function authorize({ consent }) {
  const verifier = oauth.generateRandomCodeVerifier()
  const state = oauth.generateRandomState()
  const url = new URL(as.authorization_endpoint)
  url.search = new URLSearchParams({
    client_id: client.client_id, redirect_uri: redirectURI, response_type: 'code', scope: 'nanocorp offline_access',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, resource,
  }).toString()
  let step = await browser.follow(url.toString(), {}, toClient)
  if (step.resp && step.url.includes('/login')) {
    // The development identity provider's form.
    const html = await step.resp.text()
    step = await browser.follow(step.url, { method: 'POST', form: {
      authRequestID: hidden(html, 'authRequestID'), email, password: 'correct horse battery', name: 'E2E' } }, toClient)
  }
  if (step.resp) {
    assert.ok(consent, 'consent page shown only once')
    const html = await step.resp.text()
    assert.match(html, /oauth4webapi e2e/)
    assert.match(html, /this computer, port 7777/)
    step = await browser.follow(new URL('/oidc/consent', issuer).toString(), { method: 'POST', form: {
      request: hidden(html, 'request'), csrf: hidden(html, 'csrf'), decision: 'allow' } }, toClient)
  }
  assert.ok(step.location, `no redirect back to the client: ${step.resp?.status}`)
  return { location: new URL(step.location), state, verifier }
}

const checks = {}
const first = await authorize({ consent: true })
assert.equal(first.location.searchParams.get('iss'), as.issuer)
// iss and state are checked by the client library.
assert.throws(() => oauth.validateAuthResponse(as, client, first.location, 'another-state'))
const noIss = new URL(first.location); noIss.searchParams.delete('iss')
assert.throws(() => oauth.validateAuthResponse(as, client, noIss, first.state))
const wrongIss = new URL(first.location); wrongIss.searchParams.set('iss', 'http://evil.example')
assert.throws(() => oauth.validateAuthResponse(as, client, wrongIss, first.state))
checks.iss = checks.state = true
const params = oauth.validateAuthResponse(as, client, first.location, first.state)
const exchange = (p, verifier) => oauth.authorizationCodeGrantRequest(as, client, oauth.None(), p, redirectURI, verifier,
  { ...opts, additionalParameters: { resource } })
const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(params, first.verifier))
assert.equal(tokens.token_type, 'bearer')
assert.equal(tokens.scope, 'nanocorp')
assert.equal(tokens.refresh_token, undefined)

// Consent is remembered; a wrong verifier fails (PKCE).
const second = await authorize({ consent: false })
const params2 = oauth.validateAuthResponse(as, client, second.location, second.state)
await assert.rejects(async () => oauth.processAuthorizationCodeResponse(as, client, await exchange(params2, oauth.generateRandomCodeVerifier())),
  e => e.error === 'invalid_grant')
checks.pkce = true

// A replayed code fails and revokes the token it issued.
const third = await authorize({ consent: false })
const params3 = oauth.validateAuthResponse(as, client, third.location, third.state)
const t3 = await oauth.processAuthorizationCodeResponse(as, client, await exchange(params3, third.verifier))
await assert.rejects(async () => oauth.processAuthorizationCodeResponse(as, client, await exchange(params3, third.verifier)),
  e => e.error === 'invalid_grant')
checks.replay = true

// A fourth token, revoked (RFC 7009).
const fourth = await authorize({ consent: false })
const t4 = await oauth.processAuthorizationCodeResponse(as, client,
  await exchange(oauth.validateAuthResponse(as, client, fourth.location, fourth.state), fourth.verifier))
await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), t4.access_token, opts))
checks.revoke = true

console.log(JSON.stringify({ access_token: tokens.access_token, replayed_token: t3.access_token, revoked_token: t4.access_token, client_id: client.client_id, checks }))
