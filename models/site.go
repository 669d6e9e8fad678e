package models

import "time"

// CompanySite is a company's published site: the deploy its pages are
// served from and its environment (what a deployed app reads its
// configuration from). A sites process of any machine serves it from
// this row and the blob store; no worker's disk is involved.
type CompanySite struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	// DeployID is the current deploy (nil until main was first
	// deployed). Switching it is one UPDATE: every sites process sees the
	// new deploy as its cache of this row expires.
	DeployID *string `gorm:"size:36"`
	// EnvSealed is the site's environment, sealed (AES-GCM with an
	// instance key, the company id as associated data); nil when never
	// configured.
	EnvSealed []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SiteDeploy is the tree of main at one commit, exported to the blob
// store under immutable keys: each file's bytes under
// sites/<company id>/<git blob id>, and the manifest (path → key) under
// ManifestKey. A deploy is never changed; rolling back switches the
// site's current deploy to an older one.
type SiteDeploy struct {
	ID          string `gorm:"primaryKey;size:36"`
	CompanyID   string `gorm:"size:36;not null;uniqueIndex:idx_site_deploys_commit,priority:1"`
	CommitID    string `gorm:"size:64;not null;uniqueIndex:idx_site_deploys_commit,priority:2"`
	ManifestKey string `gorm:"size:128;not null"`
	Files       int    `gorm:"not null"`
	Bytes       int64  `gorm:"not null"`
	CreatedAt   time.Time
}

// SiteState is what a sites process needs to serve a company's site: the
// company, whether it may be online, and its current deploy (empty
// DeployID: published, nothing deployed yet).
type SiteState struct {
	CompanyID   string
	Handle      string
	Online      bool
	DeployID    string
	CommitID    string
	ManifestKey string
}

// CompanyRepository records where a company's repository lives and its
// first commit: a repository whose first commit differs is another
// repository, never silently taken for this one.
type CompanyRepository struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	// Home names the repository in its backend ("local:<id>.git",
	// "github:<owner>/<name>").
	Home string `gorm:"size:300;not null"`
	// FirstCommit is the root commit of main ("" while an import resume
	// has not pushed yet).
	FirstCommit string `gorm:"size:64;not null"`
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// RepositoryInfo is what a repository backend says of a company's
// repository: its home, a reference a person can use (a local path, a
// clone URL), whether the home holds it, and main's first commit.
type RepositoryInfo struct {
	Home        string
	Ref         string
	Exists      bool
	FirstCommit string
}

// RepoFile is one file of a repository's tree at a commit: its path and
// git blob id (the SHA-1 of its content, so the same bytes have the same
// id in every commit).
type RepoFile struct {
	Path string
	ID   string
	Size int64
}
