package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Repos is where company code repositories live: one home every worker
// reaches.
type Repos struct {
	// Backend is "local" (bare repositories under Dir: a volume every
	// worker mounts in a cluster) or "github" (a GitHub organization).
	Backend string
	// Dir is the local backend's directory (default DataDir/repos).
	Dir string
	// GitHub settings (backend github).
	GitHubToken, GitHubOwner, GitHubAPIURL, GitHubPrefix string
}

// Repository backends.
const (
	RepoLocal  = "local"
	RepoGitHub = "github"
)

// Worker is the worker role's own listener: liveness and readiness for
// an orchestrator's probes.
type Worker struct {
	// HealthAddr is where GET /health and GET /ready are answered.
	HealthAddr string
}

func loadRepos(e environment, dataDir string) (Repos, error) {
	r := Repos{Backend: strings.ToLower(e.get("HOLDCO_REPO_BACKEND")), Dir: e.get("HOLDCO_REPO_DIR"),
		GitHubToken: e.get("HOLDCO_GITHUB_TOKEN"), GitHubOwner: e.get("HOLDCO_GITHUB_OWNER"), GitHubPrefix: e.get("HOLDCO_GITHUB_REPO_PREFIX")}
	if r.Dir == "" {
		r.Dir = filepath.Join(dataDir, "repos")
	}
	var err error
	if r.GitHubAPIURL, err = e.url("HOLDCO_GITHUB_API_URL"); err != nil {
		return r, err
	}
	if r.GitHubPrefix != "" && !repoPrefix(r.GitHubPrefix) {
		return r, &Error{"HOLDCO_GITHUB_REPO_PREFIX", fmt.Sprintf("%q is not letters, digits, '-', '_' or '.' (at most 40)", r.GitHubPrefix)}
	}
	switch r.Backend {
	case RepoLocal:
	case RepoGitHub:
		if r.GitHubOwner == "" {
			return r, &Error{"HOLDCO_GITHUB_OWNER", "is required with HOLDCO_REPO_BACKEND=github"}
		}
		if r.GitHubToken == "" {
			return r, &Error{"HOLDCO_GITHUB_TOKEN", "is required with HOLDCO_REPO_BACKEND=github"}
		}
	default:
		return r, &Error{"HOLDCO_REPO_BACKEND", fmt.Sprintf("%q is not one of local, github", r.Backend)}
	}
	return r, nil
}

func repoPrefix(p string) bool {
	if len(p) > 40 {
		return false
	}
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.", c)) {
			return false
		}
	}
	return true
}

func loadShared(e environment) (bool, error) {
	v := e.get("HOLDCO_SHARED_DATA_DIR")
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &Error{"HOLDCO_SHARED_DATA_DIR", fmt.Sprintf("%q is not true or false", v)}
	}
	return b, nil
}

// SplitState refuses a process that would keep on its own disk what
// another process must see: with a shared database (Postgres) and a
// shared Temporal (TEMPORAL_ADDRESS), a process running only some roles
// is one of several, so the local blob store (usesBlobs: its roles read
// or write files, traces or site deploys) and local repositories
// (usesRepos: it runs the worker) must be on a volume they all mount,
// which the operator says with HOLDCO_SHARED_DATA_DIR=true. The error
// names the variable to change.
func (c Config) SplitState(usesBlobs, usesRepos bool) error {
	if c.SharedDataDir || !c.Database.IsPostgres() || c.Temporal.Embedded() {
		return nil
	}
	if usesBlobs && c.Blob.Backend == BlobLocal {
		return &Error{"HOLDCO_BLOB_BACKEND", fmt.Sprintf("local blobs under %s would be seen by this process only, while DATABASE_URL and TEMPORAL_ADDRESS are shared by other processes; "+
			"use HOLDCO_BLOB_BACKEND=s3, or set HOLDCO_SHARED_DATA_DIR=true if every process mounts that directory", c.Blob.Dir)}
	}
	if usesRepos && c.Repos.Backend == RepoLocal {
		return &Error{"HOLDCO_REPO_BACKEND", fmt.Sprintf("local repositories under %s would be seen by this process only, while DATABASE_URL and TEMPORAL_ADDRESS are shared by other processes; "+
			"use HOLDCO_REPO_BACKEND=github, or set HOLDCO_SHARED_DATA_DIR=true if every worker, API and connector process mounts that directory", c.Repos.Dir)}
	}
	return nil
}
