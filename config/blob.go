package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Blob is where files' bytes live (the files of companies).
type Blob struct {
	// Backend is "local" (a directory, downloads signed and served on the
	// sites origin) or "s3".
	Backend string
	// Dir is the local backend's directory (default DataDir/blobs).
	Dir string
	// S3 settings (backend s3).
	S3Bucket, S3Region, S3Endpoint string
	S3PathStyle                    bool
	// S3AccessKeyID and S3SecretAccessKey; both empty use the SDK's
	// default credential chain.
	S3AccessKeyID, S3SecretAccessKey string
	// URLTTL is how long a download link works.
	URLTTL time.Duration
	// MaxFileBytes is the largest file; QuotaBytes what one company's
	// files may take in all.
	MaxFileBytes, QuotaBytes int64
}

// Blob backends.
const (
	BlobLocal = "local"
	BlobS3    = "s3"
)

func loadBlob(e environment, dataDir string) (Blob, error) {
	b := Blob{
		Backend: strings.ToLower(e.get("HOLDCO_BLOB_BACKEND")), Dir: e.get("HOLDCO_BLOB_DIR"),
		S3Bucket: e.get("HOLDCO_BLOB_S3_BUCKET"), S3Region: e.get("HOLDCO_BLOB_S3_REGION"),
		S3AccessKeyID: e.get("HOLDCO_BLOB_S3_ACCESS_KEY_ID"), S3SecretAccessKey: e.get("HOLDCO_BLOB_S3_SECRET_ACCESS_KEY"),
	}
	if b.Dir == "" {
		b.Dir = filepath.Join(dataDir, "blobs")
	}
	var err error
	if b.S3Endpoint, err = e.url("HOLDCO_BLOB_S3_ENDPOINT"); err != nil {
		return b, err
	}
	ps := e.get("HOLDCO_BLOB_S3_PATH_STYLE")
	if b.S3PathStyle, err = strconv.ParseBool(ps); err != nil {
		return b, &Error{"HOLDCO_BLOB_S3_PATH_STYLE", fmt.Sprintf("%q is not true or false", ps)}
	}
	ttl := e.get("HOLDCO_BLOB_URL_TTL")
	if b.URLTTL, err = time.ParseDuration(ttl); err != nil || b.URLTTL < time.Second || b.URLTTL > 7*24*time.Hour {
		return b, &Error{"HOLDCO_BLOB_URL_TTL", fmt.Sprintf("%q is not a duration between 1s and 168h (S3 presigns for at most 7 days)", ttl)}
	}
	if b.MaxFileBytes, err = e.count("HOLDCO_BLOB_MAX_FILE_BYTES", false); err != nil {
		return b, err
	}
	if b.QuotaBytes, err = e.count("HOLDCO_BLOB_QUOTA_BYTES", false); err != nil {
		return b, err
	}
	if b.MaxFileBytes > b.QuotaBytes {
		return b, &Error{"HOLDCO_BLOB_MAX_FILE_BYTES", fmt.Sprintf("%d is larger than HOLDCO_BLOB_QUOTA_BYTES (%d)", b.MaxFileBytes, b.QuotaBytes)}
	}
	switch b.Backend {
	case BlobLocal:
	case BlobS3:
		if b.S3Bucket == "" {
			return b, &Error{"HOLDCO_BLOB_S3_BUCKET", "is required with HOLDCO_BLOB_BACKEND=s3"}
		}
		if b.S3Region == "" {
			return b, &Error{"HOLDCO_BLOB_S3_REGION", "is required with HOLDCO_BLOB_BACKEND=s3"}
		}
		if (b.S3AccessKeyID == "") != (b.S3SecretAccessKey == "") {
			return b, &Error{"HOLDCO_BLOB_S3_ACCESS_KEY_ID", "HOLDCO_BLOB_S3_ACCESS_KEY_ID and HOLDCO_BLOB_S3_SECRET_ACCESS_KEY are set together (or both left empty for the default credential chain)"}
		}
	default:
		return b, &Error{"HOLDCO_BLOB_BACKEND", fmt.Sprintf("%q is not one of local, s3", b.Backend)}
	}
	return b, nil
}
