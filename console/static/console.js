// holdco console: small enhancements of server-rendered pages. Every form
// works without this file; it adds live turns, live founding, upload
// progress, the handle check, one post per chat message and
// confirmations. Served from holdco's own origin under a CSP without
// inline script.
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

  // The handle as it will be (normalized), while typing and at once for a
  // prefilled one: available, taken with a free suggestion, or the API's
  // reason why it is no handle, in the input's live hint. An answer to
  // older typing is dropped.
  $$('[data-handle-check]').forEach(input => {
    const hint = document.getElementById(input.getAttribute('aria-describedby'))
    let timer; let seq = 0
    const show = (state, text) => {
      hint.dataset.state = state
      hint.textContent = text
      if (state === 'taken' || state === 'invalid') input.setAttribute('aria-invalid', 'true'); else input.removeAttribute('aria-invalid')
    }
    const check = async () => {
      const mine = ++seq
      const value = input.value
      if (!value) { show('', ''); return }
      let text; let state
      try {
        const h = await getJSON('/console/handle-check.json?handle=' + encodeURIComponent(value))
        if (h.available) { state = 'available'; text = h.normalized + ' is available' }
        else { state = 'taken'; text = h.normalized + ' is taken; try ' + h.suggestion }
      } catch (err) { state = 'invalid'; text = 'Not a handle: ' + err.message }
      if (mine === seq) show(state, text)
    }
    input.addEventListener('input', () => {
      clearTimeout(timer); seq++
      if (!input.value) { show('', ''); return }
      timer = setTimeout(check, 300)
    })
    if (input.hasAttribute('data-check-now') && input.value) check()
  })

  // The chat's send form: one message, one turn. The key (the form's
  // Idempotency-Key) is new for each message and kept while that message
  // is sent again; the button is disabled while it is sent, so a double
  // click posts once (and a second post would answer the same turn).
  const sendForm = $('#send-form')
  if (sendForm) {
    const key = $('input[name=idempotency_key]', sendForm)
    const button = $('#send', sendForm)
    const status = $('#send-status', sendForm)
    const disabled = button.disabled // a turn runs: the server said wait
    let sending = false; let sent = null
    sendForm.addEventListener('submit', e => {
      if (sending) { e.preventDefault(); return }
      const body = new URLSearchParams(new FormData(sendForm))
      body.delete('csrf'); body.delete('idempotency_key')
      const what = body.toString()
      if (what !== sent && key && window.crypto && typeof window.crypto.randomUUID === 'function') key.value = window.crypto.randomUUID()
      sent = what
      sending = true
      button.disabled = true
      if (status) status.textContent = 'Sending…'
    })
    // Back from another page (the browser's cache): the form works again.
    window.addEventListener('pageshow', e => {
      if (!e.persisted) return
      sending = false; button.disabled = disabled
      if (status) status.textContent = ''
    })
  }

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
