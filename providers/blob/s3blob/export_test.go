package s3blob

// WithListPageSize returns the store asking n keys per list page.
func (s *Store) WithListPageSize(n int32) *Store {
	c := *s
	c.listPageSize = n
	return &c
}
