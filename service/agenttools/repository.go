package agenttools

import (
	"context"
	"encoding/base64"
	"errors"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"holdco/models"
	"holdco/service"
	"holdco/service/files"
)

// Repository is the company's code repository (providers/gitrepo on the
// worker); nil: the repository tools answer not_configured. Its site is
// served from the tip of main, so a commit publishes it.
type Repository interface {
	ListFiles(ctx context.Context, companyID, prefix string, limit int) ([]RepoFile, bool, error)
	// ReadFile answers ErrRepoFileNotFound for a missing file.
	ReadFile(ctx context.Context, companyID, path string) ([]byte, error)
	// Commit makes one commit on main. effectID names the call: when a
	// commit of main made for effectID exists already (the same call made
	// again after a crash), its id is answered and nothing is committed.
	Commit(ctx context.Context, companyID string, changes []RepoChange, message, effectID string) (commitID string, err error)
}

// ErrRepoFileNotFound is a Repository's answer for a missing file.
var ErrRepoFileNotFound = errors.New("repository file not found")

// RepoChange writes (Content) or deletes (Delete) one file.
type RepoChange struct {
	Path    string
	Content []byte
	Delete  bool
}

// Repository limits.
const (
	MaxRepoReadBytes   = 512 << 10
	MaxRepoCommitBytes = 3 << 20
	MaxRepoCommitFiles = 100
)

type RepoFile struct {
	Path      string `json:"path"`
	SizeBytes int64  `json:"size_bytes"`
}

type ListRepositoryFilesInput struct {
	Prefix string `json:"prefix,omitempty" jsonschema:"only paths starting with this, e.g. src/" maxLength:"1024"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many (default 500)" minimum:"1" maximum:"5000"`
}

type RepositoryFileList struct {
	Files     []RepoFile `json:"files"`
	Truncated bool       `json:"truncated"`
}

type ReadRepositoryFileInput struct {
	Path string `json:"path" jsonschema:"the file's path in the repository, e.g. index.html" maxLength:"1024"`
}

type RepositoryFileContent struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Encoding string `json:"encoding" jsonschema:"text, or base64 for a binary file"`
}

type RepositoryFileChange struct {
	Path     string  `json:"path" jsonschema:"the file's path, e.g. index.html or assets/app.js" maxLength:"1024"`
	Content  *string `json:"content,omitempty" jsonschema:"the whole new content; null or absent deletes the file"`
	Encoding string  `json:"encoding,omitempty" jsonschema:"text (default) or base64" enum:"text,base64"`
}

type CommitRepositoryFilesInput struct {
	Message string                 `json:"message" jsonschema:"the commit message" maxLength:"2000"`
	Files   []RepositoryFileChange `json:"files" jsonschema:"1 to 100 files to write or delete"`
}

type CommitResult struct {
	CommitID string `json:"commit_id"`
	Files    int    `json:"files"`
}

// repoPath checks a repository path: relative, NFC, no empty, "." or ".."
// segment, nothing under .git.
func repoPath(p, field string) (string, error) {
	if p == "" || !utf8.ValidString(p) || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "\\\x00") {
		return "", invalid(field, "%s must be a relative file path such as index.html or src/app.js.", field)
	}
	p = norm.NFC.String(p)
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.EqualFold(seg, ".git") {
			return "", invalid(field, "%s must not hold empty, ., .. or .git segments.", field)
		}
	}
	if path.Clean(p) != p {
		return "", invalid(field, "%s is not a clean path.", field)
	}
	return p, nil
}

// registerRepository adds the repository tools. The adapter knows no
// tenants: each call first authorizes the company (authorize) as every
// use case does.
func registerRepository(c *Catalog, repo Repository, authorize func(ctx context.Context, companyID string) error) {
	missing := func() error { return notConfigured("The code repository", "the worker role") }
	Register(c, "list_repository_files", "List the files of the company's code repository (its site is served from it).",
		func(ctx context.Context, companyID string, in ListRepositoryFilesInput) (RepositoryFileList, error) {
			if repo == nil {
				return RepositoryFileList{}, missing()
			}
			if err := authorize(ctx, companyID); err != nil {
				return RepositoryFileList{}, err
			}
			limit := in.Limit
			if limit == 0 {
				limit = 500
			}
			files, more, err := repo.ListFiles(ctx, companyID, in.Prefix, limit)
			if files == nil {
				files = []RepoFile{}
			}
			return RepositoryFileList{Files: files, Truncated: more}, err
		})
	Register(c, "read_repository_file", "Read a file of the company's code repository (at most 512 KiB; binary files come base64).",
		func(ctx context.Context, companyID string, in ReadRepositoryFileInput) (RepositoryFileContent, error) {
			if repo == nil {
				return RepositoryFileContent{}, missing()
			}
			if err := authorize(ctx, companyID); err != nil {
				return RepositoryFileContent{}, err
			}
			p, err := repoPath(in.Path, "path")
			if err != nil {
				return RepositoryFileContent{}, err
			}
			data, err := repo.ReadFile(ctx, companyID, p)
			if errors.Is(err, ErrRepoFileNotFound) {
				return RepositoryFileContent{}, models.Errorf(models.CodeNotFound, "%s is not in the repository.", p).WithField("path")
			}
			if err != nil {
				return RepositoryFileContent{}, err
			}
			if len(data) > MaxRepoReadBytes {
				return RepositoryFileContent{}, models.Errorf(models.CodeTooLarge, "%s is %d bytes; read_repository_file reads at most %d.", p, len(data), MaxRepoReadBytes).WithField("path")
			}
			if utf8.Valid(data) && !strings.ContainsRune(string(data), 0) {
				return RepositoryFileContent{Path: p, Content: string(data), Encoding: "text"}, nil
			}
			return RepositoryFileContent{Path: p, Content: base64.StdEncoding.EncodeToString(data), Encoding: "base64"}, nil
		})
	Register(c, "commit_repository_files", "Write or delete files of the company's code repository in one commit on main; the site serves the new files at once.",
		func(ctx context.Context, companyID string, in CommitRepositoryFilesInput) (CommitResult, error) {
			if repo == nil {
				return CommitResult{}, missing()
			}
			if err := authorize(ctx, companyID); err != nil {
				return CommitResult{}, err
			}
			if strings.TrimSpace(in.Message) == "" {
				return CommitResult{}, invalid("message", "The commit needs a message.")
			}
			if len(in.Files) == 0 || len(in.Files) > MaxRepoCommitFiles {
				return CommitResult{}, invalid("files", "A commit changes 1 to %d files.", MaxRepoCommitFiles)
			}
			var changes []RepoChange
			total, seen := 0, map[string]bool{}
			for i, f := range in.Files {
				field := "files[" + itoa(i) + "].path"
				p, err := repoPath(f.Path, field)
				if err != nil {
					return CommitResult{}, err
				}
				if seen[p] {
					return CommitResult{}, invalid(field, "%s appears twice in the commit.", p)
				}
				seen[p] = true
				if f.Content == nil {
					changes = append(changes, RepoChange{Path: p, Delete: true})
					continue
				}
				body, err := files.InlineContent(*f.Content, f.Encoding == "base64", "files["+itoa(i)+"].content")
				if err != nil {
					return CommitResult{}, err
				}
				total += len(body)
				changes = append(changes, RepoChange{Path: p, Content: body})
			}
			if total > MaxRepoCommitBytes {
				return CommitResult{}, models.Errorf(models.CodeTooLarge, "The commit writes %d bytes; at most %d (3 MB) per commit.", total, MaxRepoCommitBytes).WithField("files")
			}
			id, err := repo.Commit(ctx, companyID, changes, in.Message, service.EffectID(ctx, "commit"))
			return CommitResult{CommitID: id, Files: len(changes)}, err
		})
}

func itoa(i int) string { return strconv.Itoa(i) }
