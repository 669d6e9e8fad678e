// Package s3blob keeps blobs in an S3-protocol bucket (AWS S3, or any
// store speaking the protocol: MinIO, R2, …) through aws-sdk-go-v2, and
// hands out presigned GET URLs that make the browser save the file.
package s3blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"holdco/models"
	"holdco/providers/blob"
)

// Config names the bucket and how to reach it.
type Config struct {
	Bucket string
	Region string
	// Endpoint is the store's URL for stores other than AWS (empty: AWS).
	Endpoint string
	// PathStyle addresses the bucket as <endpoint>/<bucket>/<key> instead
	// of a virtual host (most self-hosted stores need it).
	PathStyle bool
	// AccessKeyID and SecretAccessKey; both empty uses the SDK's default
	// chain (environment, shared files, instance or task roles).
	AccessKeyID     string
	SecretAccessKey string
	// HTTPClient is optional (tests).
	HTTPClient *http.Client
}

// Store is a bucket.
type Store struct {
	bucket  string
	client  *s3.Client
	presign *s3.PresignClient
	// listPageSize is the keys asked per list page (0: the store's
	// default, 1000); tests make it small to walk many pages.
	listPageSize int32
}

// New builds the client; it does not call the store.
func New(ctx context.Context, c Config) (*Store, error) {
	if c.Bucket == "" {
		return nil, errors.New("s3blob: bucket is required")
	}
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(c.Region)}
	if c.AccessKeyID != "" || c.SecretAccessKey != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(c.AccessKeyID, c.SecretAccessKey, "")))
	}
	if c.HTTPClient != nil {
		opts = append(opts, awsconfig.WithHTTPClient(c.HTTPClient))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3blob: %w", err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		o.UsePathStyle = c.PathStyle
		// Checksums only where the API requires them: stores other than
		// AWS do not all take the trailing checksums of aws-chunked bodies.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &Store{bucket: c.Bucket, client: client, presign: s3.NewPresignClient(client)}, nil
}

// Put uploads body under key. A body of known size (size ≥ 0) is streamed
// with an unsigned payload; one of unknown size is first spooled to a
// temporary file, because a PUT needs its length. It returns the bytes
// stored.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, size int64, contentType string) (int64, error) {
	if err := blob.CheckKey(key); err != nil {
		return 0, err
	}
	if size < 0 {
		f, n, err := spool(body)
		if err != nil {
			return n, fmt.Errorf("s3blob: put: %w", err)
		}
		defer func() { _ = f.Close(); _ = os.Remove(f.Name()) }()
		body, size = f, n
	} else {
		body = &exactReader{r: body, left: size}
	}
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: body, ContentLength: aws.Int64(size)}
	if contentType != "" {
		in.ContentType = &contentType
	}
	if _, err := s.client.PutObject(ctx, in, s3.WithAPIOptions(v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)); err != nil {
		return 0, fmt.Errorf("s3blob: put: %w", err)
	}
	return size, nil
}

// spool copies r into a temporary file, rewound.
func spool(r io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "holdco-blob-*")
	if err != nil {
		return nil, 0, err
	}
	n, err := io.Copy(f, r)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return nil, n, err
	}
	return f, n, nil
}

// exactReader fails a body that is shorter or longer than announced.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		var one [1]byte
		if n, _ := e.r.Read(one[:]); n > 0 {
			return 0, errors.New("body longer than announced")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		return n, io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// Delete removes the object; a missing object is not an error (S3 answers
// 204 either way; other stores may answer NoSuchKey).
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := blob.CheckKey(key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode() == "NoSuchKey" || apiErr.ErrorCode() == "NotFound") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("s3blob: delete: %w", err)
	}
	return nil
}

// Open reads the object stored under key; a missing object is an error
// that wraps fs.ErrNotExist.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := blob.CheckKey(key); err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode() == "NoSuchKey" || apiErr.ErrorCode() == "NotFound") {
		return nil, fmt.Errorf("s3blob: open: %w", fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("s3blob: open: %w", err)
	}
	return out.Body, nil
}

// Exists reports whether an object is stored under key.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	if err := blob.CheckKey(key); err != nil {
		return false, err
	}
	_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode() == "NotFound" || apiErr.ErrorCode() == "NoSuchKey") {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("s3blob: head: %w", err)
	}
	return true, nil
}

// List returns the objects whose keys start with prefix (a folder such as
// "runs/<id>/", checked by blob.CheckPrefix), at any depth, sorted by key
// (the order S3 lists in), following every page. Keys holdco would never
// make are left out, as the local store leaves stray files out.
func (s *Store) List(ctx context.Context, prefix string) ([]models.BlobInfo, error) {
	if err := blob.CheckPrefix(prefix); err != nil {
		return nil, err
	}
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix}
	if s.listPageSize > 0 {
		in.MaxKeys = aws.Int32(s.listPageSize)
	}
	var out []models.BlobInfo
	pages := s3.NewListObjectsV2Paginator(s.client, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3blob: list: %w", err)
		}
		for _, o := range page.Contents {
			if blob.CheckKey(aws.ToString(o.Key)) != nil {
				continue // not an object holdco stored (put there by hand)
			}
			info := models.BlobInfo{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)}
			if o.LastModified != nil {
				info.ModTime = *o.LastModified
			}
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b models.BlobInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// DownloadURL presigns a GET that answers the object as an attachment
// named filename with contentType, valid for ttl.
func (s *Store) DownloadURL(ctx context.Context, key, filename, contentType string, ttl time.Duration) (string, error) {
	if err := blob.CheckKey(key); err != nil {
		return "", err
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket:                     &s.bucket,
		Key:                        &key,
		ResponseContentDisposition: aws.String(blob.ContentDisposition(filename)),
		ResponseContentType:        aws.String(contentType),
		ResponseCacheControl:       aws.String("private, no-store"),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("s3blob: presign: %w", err)
	}
	return req.URL, nil
}
