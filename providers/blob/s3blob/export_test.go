package s3blob

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// WithListPageSize returns the store asking n keys per list page.
func (s *Store) WithListPageSize(n int32) *Store {
	c := *s
	c.listPageSize = n
	return &c
}

// RawPut stores an object under any key, past the key rule (a test puts
// what an operator might put by hand).
func (s *Store) RawPut(ctx context.Context, key, body string) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: strings.NewReader(body)})
	return err
}
