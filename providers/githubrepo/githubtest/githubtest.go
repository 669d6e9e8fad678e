// Package githubtest is a local server speaking the part of GitHub's REST
// API that providers/githubrepo uses, with GitHub's answers for the cases
// the adapter relies on (404 for a missing repository, 409 for the Git
// data API on an empty repository, 422 for a ref update that is not a
// fast-forward and for a repository name taken). Objects are kept in
// memory; blob ids are real git blob ids. Tests only.
package githubtest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Server is a fake GitHub API for one organization.
type Server struct {
	URL   string
	Token string
	Org   string

	mu      sync.Mutex
	repos   map[string]*repo
	created int
	seq     int
}

type repo struct {
	main    string
	blobs   map[string][]byte
	trees   map[string]map[string]string // sha → path → blob sha (flattened)
	commits map[string]commit
}

type commit struct {
	Tree    string
	Parents []string
	Message string
}

// New starts a server for org, accepting token; it stops with the test.
func New(t testing.TB, org, token string) *Server {
	s := &Server{Token: token, Org: org, repos: map[string]*repo{}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/"
	return s
}

// Created counts the repositories created so far.
func (s *Server) Created() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.created
}

// Repos lists the repositories' names.
func (s *Server) Repos() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n := range s.repos {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code int, msg string) {
	reply(w, code, map[string]string{"message": msg})
}

func blobID(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Server) id(kind string) string {
	s.seq++
	sum := sha1.Sum([]byte(kind + strconv.Itoa(s.seq)))
	return hex.EncodeToString(sum[:])
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		fail(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) == 3 && parts[0] == "orgs" && parts[2] == "repos" && r.Method == http.MethodPost {
		var in struct{ Name string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		if parts[1] != s.Org {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		if _, ok := s.repos[in.Name]; ok {
			fail(w, http.StatusUnprocessableEntity, "Repository creation failed: name already exists on this account")
			return
		}
		s.repos[in.Name] = &repo{blobs: map[string][]byte{}, trees: map[string]map[string]string{}, commits: map[string]commit{}}
		s.created++
		reply(w, http.StatusCreated, s.repoJSON(in.Name))
		return
	}
	if len(parts) < 3 || parts[0] != "repos" || parts[1] != s.Org {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	name, rest := parts[2], parts[3:]
	rp := s.repos[name]
	if rp == nil {
		fail(w, http.StatusNotFound, "Not Found")
		return
	}
	switch {
	case len(rest) == 0 && r.Method == http.MethodGet:
		reply(w, http.StatusOK, s.repoJSON(name))
	case len(rest) == 0 && r.Method == http.MethodDelete:
		delete(s.repos, name)
		w.WriteHeader(http.StatusNoContent)
	case len(rest) == 1 && rest[0] == "commits" && r.Method == http.MethodGet:
		s.listCommits(w, r, rp)
	case len(rest) >= 2 && rest[0] == "contents" && r.Method == http.MethodPut:
		s.createFile(w, r, rp, strings.Join(rest[1:], "/"))
	case len(rest) >= 2 && rest[0] == "git":
		if rp.main == "" {
			fail(w, http.StatusConflict, "Git Repository is empty.")
			return
		}
		s.git(w, r, rp, rest[1:])
	default:
		fail(w, http.StatusNotFound, "Not Found")
	}
}

func (s *Server) repoJSON(name string) map[string]any {
	return map[string]any{"name": name, "full_name": s.Org + "/" + name, "private": true,
		"clone_url": strings.TrimSuffix(s.URL, "/") + "/" + s.Org + "/" + name + ".git", "default_branch": "main"}
}

// firstParents is main's history, newest first.
func (rp *repo) firstParents() []string {
	var out []string
	for c := rp.main; c != ""; {
		out = append(out, c)
		ps := rp.commits[c].Parents
		if len(ps) == 0 {
			break
		}
		c = ps[0]
	}
	return out
}

func (s *Server) listCommits(w http.ResponseWriter, r *http.Request, rp *repo) {
	if rp.main == "" {
		fail(w, http.StatusConflict, "Git Repository is empty.")
		return
	}
	all := rp.firstParents()
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	last := (len(all) + per - 1) / per
	if last > 1 {
		link := func(p int, rel string) string {
			q := r.URL.Query()
			q.Set("page", strconv.Itoa(p))
			return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, strings.TrimSuffix(s.URL, "/"), r.URL.Path, q.Encode(), rel)
		}
		links := []string{link(last, "last")}
		if page < last {
			links = append(links, link(page+1, "next"))
		}
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	var out []map[string]any
	for i := (page - 1) * per; i < len(all) && i < page*per; i++ {
		out = append(out, map[string]any{"sha": all[i]})
	}
	reply(w, http.StatusOK, out)
}

func (s *Server) createFile(w http.ResponseWriter, r *http.Request, rp *repo, path string) {
	var in struct {
		Message string
		Content string
		Branch  string
		SHA     string
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		fail(w, http.StatusBadRequest, "Problems parsing JSON")
		return
	}
	body, err := base64.StdEncoding.DecodeString(in.Content)
	if err != nil {
		fail(w, http.StatusUnprocessableEntity, "content is not valid Base64")
		return
	}
	files := map[string]string{}
	var parents []string
	if rp.main != "" {
		cur := rp.trees[rp.commits[rp.main].Tree]
		if _, exists := cur[path]; exists && in.SHA == "" {
			fail(w, http.StatusUnprocessableEntity, `"sha" wasn't supplied.`)
			return
		}
		for k, v := range cur {
			files[k] = v
		}
		parents = []string{rp.main}
	}
	b := blobID(body)
	rp.blobs[b] = body
	files[path] = b
	tree := s.id("tree")
	rp.trees[tree] = files
	c := s.id("commit")
	rp.commits[c] = commit{Tree: tree, Parents: parents, Message: in.Message}
	rp.main = c
	reply(w, http.StatusCreated, map[string]any{"content": map[string]any{"path": path, "sha": b}, "commit": map[string]any{"sha": c}})
}

func (s *Server) git(w http.ResponseWriter, r *http.Request, rp *repo, rest []string) {
	kind, arg := rest[0], strings.Join(rest[1:], "/")
	switch {
	case kind == "ref" && r.Method == http.MethodGet, kind == "refs" && r.Method == http.MethodGet && arg != "":
		if arg != "heads/main" {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		reply(w, http.StatusOK, map[string]any{"ref": "refs/heads/main", "object": map[string]any{"type": "commit", "sha": rp.main}})
	case kind == "refs" && r.Method == http.MethodPatch:
		var in struct {
			SHA   string
			Force bool
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		c, ok := rp.commits[in.SHA]
		if arg != "heads/main" || !ok {
			fail(w, http.StatusUnprocessableEntity, "Object does not exist")
			return
		}
		if !in.Force && (len(c.Parents) == 0 || c.Parents[0] != rp.main) {
			fail(w, http.StatusUnprocessableEntity, "Update is not a fast forward")
			return
		}
		rp.main = in.SHA
		reply(w, http.StatusOK, map[string]any{"ref": "refs/heads/main", "object": map[string]any{"type": "commit", "sha": rp.main}})
	case kind == "commits" && r.Method == http.MethodGet:
		c, ok := rp.commits[arg]
		if !ok {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		var parents []map[string]string
		for _, p := range c.Parents {
			parents = append(parents, map[string]string{"sha": p})
		}
		reply(w, http.StatusOK, map[string]any{"sha": arg, "message": c.Message, "tree": map[string]string{"sha": c.Tree}, "parents": parents})
	case kind == "commits" && r.Method == http.MethodPost:
		var in struct {
			Message string
			Tree    string
			Parents []string
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		if _, ok := rp.trees[in.Tree]; !ok {
			fail(w, http.StatusUnprocessableEntity, "Tree SHA does not exist")
			return
		}
		for _, p := range in.Parents {
			if _, ok := rp.commits[p]; !ok {
				fail(w, http.StatusUnprocessableEntity, "Parent SHA does not exist or is not a commit object")
				return
			}
		}
		sha := s.id("commit")
		rp.commits[sha] = commit{Tree: in.Tree, Parents: in.Parents, Message: in.Message}
		reply(w, http.StatusCreated, map[string]any{"sha": sha, "tree": map[string]string{"sha": in.Tree}})
	case kind == "trees" && r.Method == http.MethodGet:
		files, ok := rp.trees[arg]
		if !ok {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		var entries []map[string]any
		for p, b := range files {
			entries = append(entries, map[string]any{"path": p, "mode": "100644", "type": "blob", "sha": b, "size": len(rp.blobs[b])})
		}
		reply(w, http.StatusOK, map[string]any{"sha": arg, "tree": entries, "truncated": false})
	case kind == "trees" && r.Method == http.MethodPost:
		var in struct {
			BaseTree string `json:"base_tree"`
			Tree     []struct {
				Path string
				SHA  *string
			}
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		files := map[string]string{}
		for k, v := range rp.trees[in.BaseTree] {
			files[k] = v
		}
		for _, e := range in.Tree {
			if e.SHA == nil {
				delete(files, e.Path)
				continue
			}
			if _, ok := rp.blobs[*e.SHA]; !ok {
				fail(w, http.StatusUnprocessableEntity, "tree.sha is not a valid blob")
				return
			}
			files[e.Path] = *e.SHA
		}
		sha := s.id("tree")
		rp.trees[sha] = files
		reply(w, http.StatusCreated, map[string]any{"sha": sha})
	case kind == "blobs" && r.Method == http.MethodPost:
		var in struct{ Content, Encoding string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		body := []byte(in.Content)
		if in.Encoding == "base64" {
			var err error
			if body, err = base64.StdEncoding.DecodeString(in.Content); err != nil {
				fail(w, http.StatusUnprocessableEntity, "invalid base64")
				return
			}
		}
		b := blobID(body)
		rp.blobs[b] = body
		reply(w, http.StatusCreated, map[string]any{"sha": b})
	case kind == "blobs" && r.Method == http.MethodGet:
		body, ok := rp.blobs[arg]
		if !ok {
			fail(w, http.StatusNotFound, "Not Found")
			return
		}
		reply(w, http.StatusOK, map[string]any{"sha": arg, "size": len(body), "encoding": "base64", "content": base64.StdEncoding.EncodeToString(body)})
	default:
		fail(w, http.StatusNotFound, "Not Found")
	}
}
