// A minimal browser for the flow test: follows redirects by hand, keeps
// cookies per host (as browsers do, whatever the port), fills forms.
export class Browser {
  constructor() { this.jar = new Map() }

  cookieHeader(url) {
    const c = this.jar.get(new URL(url).hostname)
    return c ? [...c].map(([k, v]) => `${k}=${v}`).join('; ') : ''
  }

  store(url, resp) {
    const host = new URL(url).hostname
    const c = this.jar.get(host) ?? new Map()
    for (const line of resp.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';')
      const i = pair.indexOf('=')
      const name = pair.slice(0, i).trim(), value = pair.slice(i + 1).trim()
      if (attrs.some(a => /max-age=(-|0\b)/i.test(a.trim())) || value === '') c.delete(name)
      else c.set(name, value)
    }
    this.jar.set(host, c)
  }

  async request(url, { method = 'GET', form } = {}) {
    const headers = { cookie: this.cookieHeader(url) }
    let body
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(form).toString()
    }
    const resp = await fetch(url, { method, headers, body, redirect: 'manual' })
    this.store(url, resp)
    return resp
  }

  // follow GETs redirects until stop(url) says the location is the
  // client's (not fetched) or a page answers.
  async follow(url, opts, stop) {
    let resp = await this.request(url, opts)
    for (let i = 0; i < 20; i++) {
      if (resp.status < 300 || resp.status >= 400) return { resp, url }
      const next = new URL(resp.headers.get('location'), url).toString()
      if (stop(next)) return { location: next }
      url = next
      resp = await this.request(url)
    }
    throw new Error('too many redirects')
  }
}

export function hidden(html, name) {
  const m = html.match(new RegExp(`name="${name}" value="([^"]*)"`))
  if (!m) throw new Error(`no ${name} field in page: ${html.slice(0, 500)}`)
  return m[1].replaceAll('&#43;', '+').replaceAll('&amp;', '&').replaceAll('&#34;', '"').replaceAll('&#39;', "'")
}
