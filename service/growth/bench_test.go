package growth_test

import (
	"testing"
)

// BenchmarkDomainSearchBareName is a bare name's suggestion grid over the
// default TLDs: authorization, IDNA checks, the local registrar and the
// held-domain query.
func BenchmarkDomainSearchBareName(b *testing.B) {
	w := newWorldB(b)
	for b.Loop() {
		if _, err := w.e.Svc.Growth.Search(w.ada, w.shop, "greenleaf"); err != nil {
			b.Fatal(err)
		}
	}
}
