package layering_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// systemProducer matches a call of the store's System* scope producers,
// which make a tenant scope without the authorization step.
var systemProducer = regexp.MustCompile(`\.System(Company|Conglomerate|Admin)Scope\(`)

// actorMade matches building a store actor or the admin scope by hand:
// outside the one function that turns an authenticated principal into an
// actor, that would be a credential nobody presented.
var actorMade = regexp.MustCompile(`store\.Actor\{|store\.AuthorizeAdmin\(`)

// actorAllowed are the files of the authorization step itself.
var actorAllowed = map[string]bool{"service/authorize.go": true, "service/principal.go": true}

// systemAllowed lists the request-side files that act as the system on
// purpose, with the producer each may call.
var systemAllowed = map[string]string{
	// The payment provider's webhooks act for no user.
	"service/billing/webhooks.go": "SystemConglomerateScope",
	// A signed billing link is the credential: it authorizes one payment
	// action on the conglomerate it names.
	"service/billing/links.go": "SystemConglomerateScope",
	// A signed local checkout link is the credential: it names one domain
	// purchase of the conglomerate it names.
	"service/growth/localcheckout.go": "SystemConglomerateScope",
}

// TestRequestsGetScopesOnlyFromTheAuthorizationStep: the REST adapter (and
// later the connector and the authorization server) and the use cases get
// tenant scopes from the authorization step only; the System* producers are
// for the worker.
func TestRequestsGetScopesOnlyFromTheAuthorizationStep(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, dir := range []string{"api", "service", "mcp", "oauth"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if os.IsNotExist(err) {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range systemProducer.FindAllString(string(src), -1) {
				if allowed := systemAllowed[rel]; allowed != "" && strings.Contains(m, allowed) {
					continue
				}
				t.Errorf("%s calls %s: requests get tenant scopes from the authorization step (store.Authorize*), not from the worker's producers", rel, strings.TrimSuffix(m[1:], "("))
			}
			if m := actorMade.FindString(string(src)); m != "" && !actorAllowed[rel] {
				t.Errorf("%s uses %s: only the authorization step (service/authorize.go) turns a principal into a store actor", rel, strings.TrimSuffix(strings.TrimSuffix(m, "{"), "("))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestActorPatternMatches(t *testing.T) {
	for _, s := range []string{"store.Actor{UserID: id}", "store.AuthorizeAdmin(a)"} {
		if !actorMade.MatchString(s) {
			t.Errorf("pattern misses %q", s)
		}
	}
}

func TestSystemProducerPatternMatches(t *testing.T) {
	for _, s := range []string{"st.SystemCompanyScope(ctx, id)", "s.store.SystemConglomerateScope(id)", "x.SystemAdminScope()"} {
		if !systemProducer.MatchString(s) {
			t.Errorf("pattern misses %q", s)
		}
	}
}
