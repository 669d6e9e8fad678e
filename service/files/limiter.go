package files

import "holdco/store"

// Upload rate limit per company: a burst of UploadBurst, refilled at
// UploadsPerMinute, counted once for the cluster (a token bucket in the
// database that every replica takes from).
const (
	UploadsPerMinute = 60
	UploadBurst      = 20
)

// uploadBucket is the upload limit's shared bucket, keyed by company.
var uploadBucket = store.TokenBucket{Name: "file_uploads/company", PerMinute: UploadsPerMinute, Burst: UploadBurst}
