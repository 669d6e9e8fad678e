package statichost

import (
	"bytes"
	"html/template"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"holdco/models"
)

// Handler serves GET and HEAD /<handle>/<path> (mount it with any base
// path stripped) from the site's current deploy. A path ending in "/" is
// that directory's index.html; the site's "/" falls back to README.md as
// text. There is no directory listing. An archived company's site answers
// 410. Responses carry the file's content id as ETag, so a browser
// revalidates cheaply and sees a new deploy at once.
func (h *Host) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range SiteHeaders {
			w.Header().Set(k, v)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			errorPage(w, r, http.StatusMethodNotAllowed, "Method not allowed", "This site only answers GET and HEAD.")
			return
		}
		ctx := r.Context()
		if companyID, ok := h.domainSite(r); ok {
			st, found, err := h.siteOf(ctx, "c:"+companyID, func() (models.SiteState, error) { return h.records.SiteOfCompany(ctx, companyID) })
			h.serve(w, r, st, found, err, "/", strings.TrimPrefix(r.URL.Path, "/"), true)
			return
		}
		handle, rest, hasSlash := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if !handlePattern.MatchString(handle) {
			notFound(w, r)
			return
		}
		st, found, err := h.siteOf(ctx, "h:"+handle, func() (models.SiteState, error) { return h.records.SiteByHandle(ctx, handle) })
		h.serve(w, r, st, found, err, "/"+handle+"/", rest, hasSlash)
	})
}

// serve answers a path of a company's site published under base ("/" for
// a domain, "/<handle>/" otherwise).
func (h *Host) serve(w http.ResponseWriter, r *http.Request, st models.SiteState, found bool, err error, base, rest string, hasSlash bool) {
	if err != nil {
		unavailable(w, r)
		return
	}
	if !found {
		notFound(w, r)
		return
	}
	if !st.Online {
		errorPage(w, r, http.StatusGone, "Site offline", "This site is no longer online.")
		return
	}
	if !hasSlash {
		// Relative links resolve against the directory.
		http.Redirect(w, r, base, http.StatusMovedPermanently)
		return
	}
	if st.DeployID == "" {
		notFound(w, r) // published, nothing deployed yet
		return
	}
	m, err := h.manifest(r.Context(), st)
	if err != nil {
		unavailable(w, r)
		return
	}
	isDir := rest == "" || strings.HasSuffix(rest, "/")
	name := strings.TrimSuffix(rest, "/")
	if name != "" && ("/"+name != path.Clean("/"+name) || strings.Contains(name, "..")) {
		notFound(w, r)
		return
	}
	if isDir {
		name = path.Join(name, "index.html")
	}
	f, ok := m.Files[name]
	if !ok && rest == "" {
		name = "README.md"
		f, ok = m.Files[name]
	}
	if !ok && !isDir && path.Ext(name) == "" {
		// A directory named without its slash.
		if _, dir := m.Files[name+"/index.html"]; dir {
			http.Redirect(w, r, path.Base(name)+"/", http.StatusMovedPermanently)
			return
		}
	}
	if !ok {
		notFound(w, r)
		return
	}
	body, err := h.content(r.Context(), f)
	if err != nil {
		unavailable(w, r)
		return
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" || name == "README.md" {
		ctype = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache") // a deploy switch changes the answer
	w.Header().Set("ETag", `"`+path.Base(f.Key)+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

var errorTemplate = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title><style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p></body></html>
`))

func notFound(w http.ResponseWriter, r *http.Request) {
	errorPage(w, r, http.StatusNotFound, "Page not found", "There is no page at this address.")
}

func unavailable(w http.ResponseWriter, r *http.Request) {
	errorPage(w, r, http.StatusServiceUnavailable, "Site unavailable", "This site cannot be served right now; try again shortly.")
}

func errorPage(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = errorTemplate.Execute(w, struct{ Title, Message string }{title, message})
	}
}
