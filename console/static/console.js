// holdco console: small enhancements of server-rendered pages. Every form
// works without this file; it adds live turns, live founding, upload
// progress, the handle check and confirmations. Served from holdco's own
// origin under a CSP without inline script.
'use strict'
;(function () {
  const $ = (sel, root) => (root || document).querySelector(sel)
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel))
  const sleep = ms => new Promise(r => setTimeout(r, ms))

  async function getJSON (url) {
    const res = await fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
    const body = await res.json().catch(() => ({}))
    if (!res.ok) throw new Error(body.detail || ('HTTP ' + res.status))
    return body
  }

  // Confirm destructive forms.
  $$('form[data-confirm]').forEach(f => f.addEventListener('submit', e => {
    if (!window.confirm(f.dataset.confirm)) e.preventDefault()
  }))

  // A turn that runs: poll its state, show its text as it grows, reload
  // once it ended (credits, question and answer come from the server).
  $$('[data-poll][data-turn]').forEach(async li => {
    const id = li.dataset.turn
    const status = $('[data-field=status]', li)
    const text = $('[data-field=text]', li)
    for (;;) {
      let t
      try { t = await getJSON('/console/turns/' + encodeURIComponent(id) + '/state') } catch (err) {
        status.textContent = err.message; await sleep(3000); continue
      }
      status.textContent = t.status
      status.className = 'status s-' + t.status
      li.dataset.status = t.status
      if (t.text) text.textContent = t.text
      if (!t.active) { window.location.reload(); return }
      await sleep(700)
    }
  })

  // The founding interviewer works: reload when it answered.
  const fchat = $('[data-poll-founding]')
  if (fchat) {
    (async () => {
      const seen = Number(fchat.dataset.pollFounding)
      for (;;) {
        await sleep(1000)
        try {
          const s = await getJSON('/console/found.json')
          if (!s.working || s.entries !== seen) { window.location.reload(); return }
        } catch (err) { /* keep polling */ }
      }
    })()
  }

  // A company being set up: refresh the dashboard until it is ready.
  const prov = $('[data-refresh]')
  if (prov) setTimeout(() => window.location.reload(), Number(prov.dataset.refresh) || 3000)

  // The handle as it will be, while typing.
  $$('[data-handle-check]').forEach(input => {
    const hint = document.getElementById(input.getAttribute('aria-describedby'))
    let timer
    input.addEventListener('input', () => {
      clearTimeout(timer)
      if (!input.value) { hint.textContent = ''; return }
      timer = setTimeout(async () => {
        try {
          const h = await getJSON('/console/handle-check.json?handle=' + encodeURIComponent(input.value))
          hint.textContent = h.available ? h.normalized + ' is free' : h.normalized + ' is taken; try ' + h.suggestion
        } catch (err) { hint.textContent = err.message }
      }, 300)
    })
  })

  // Upload with progress.
  const up = $('#upload-form')
  if (up && window.XMLHttpRequest) {
    up.addEventListener('submit', e => {
      e.preventDefault()
      const bar = $('#upload-progress'); const st = $('#upload-status')
      const xhr = new XMLHttpRequest()
      xhr.open('POST', up.action)
      xhr.setRequestHeader('X-CSRF-Token', up.dataset.csrf)
      bar.hidden = false
      xhr.upload.onprogress = ev => { if (ev.lengthComputable) bar.value = Math.round(100 * ev.loaded / ev.total) }
      xhr.onload = () => {
        let body = {}
        try { body = JSON.parse(xhr.responseText) } catch (err) { /* not JSON */ }
        if (xhr.status === 200) { st.textContent = 'Uploaded ' + body.path; window.location.reload() } else st.textContent = body.detail || ('Upload failed (HTTP ' + xhr.status + ')')
      }
      xhr.onerror = () => { st.textContent = 'The upload failed; check the connection and retry.' }
      xhr.send(new FormData(up))
    })
  }

  // Focus the first field of a page's main form once, for keyboard users.
  const msg = $('#message')
  if (msg && !msg.disabled) msg.focus()
})()
