package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"

	"holdco/config"
	"holdco/providers/blob/local"
	"holdco/providers/blob/s3blob"
	"holdco/service/files"
)

// blobURLKeyName names the instance secret that signs the local blob
// store's download URLs: every api and sites process reads the same one
// from the database.
const blobURLKeyName = "blob-url-key"

// blobStore is what both blob adapters offer: the files' store and the
// deploys' (Exists).
type blobStore interface {
	files.BlobStore
	Exists(ctx context.Context, key string) (bool, error)
}

// buildBlobs opens the configured blob store. The local store's downloads
// point at sitesURL; local is nil for the s3 backend.
func (a *App) buildBlobs(ctx context.Context, sitesURL string) (blobs blobStore, localStore *local.Store, err error) {
	cfg := a.cfg.Blob
	switch cfg.Backend {
	case config.BlobS3:
		s, err := s3blob.New(ctx, s3blob.Config{Bucket: cfg.S3Bucket, Region: cfg.S3Region, Endpoint: cfg.S3Endpoint, PathStyle: cfg.S3PathStyle,
			AccessKeyID: cfg.S3AccessKeyID, SecretAccessKey: cfg.S3SecretAccessKey})
		if err != nil {
			return nil, nil, fmt.Errorf("HOLDCO_BLOB_S3_BUCKET: %w", err)
		}
		return s, nil, nil
	default:
		key, err := a.Store.Identity().InstanceSecret(ctx, blobURLKeyName, func() []byte {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			return b
		})
		if err != nil {
			return nil, nil, fmt.Errorf("blob URL key: %w", err)
		}
		s, err := local.New(cfg.Dir, key, sitesURL)
		if err != nil {
			return nil, nil, fmt.Errorf("HOLDCO_BLOB_DIR: %w", err)
		}
		return s, s, nil
	}
}

// fileLimits are the files use cases' limits from the configuration.
func (a *App) fileLimits() files.Limits {
	return files.Limits{MaxFileBytes: a.cfg.Blob.MaxFileBytes, QuotaBytes: a.cfg.Blob.QuotaBytes, URLTTL: a.cfg.Blob.URLTTL}
}

// withBlobDownloads serves the local blob store's signed downloads at
// local.PathPrefix beside the sites.
func withBlobDownloads(sites http.Handler, blobs *local.Store) http.Handler {
	if blobs == nil {
		return sites
	}
	downloads := blobs.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, local.PathPrefix) {
			downloads.ServeHTTP(w, r)
			return
		}
		sites.ServeHTTP(w, r)
	})
}
