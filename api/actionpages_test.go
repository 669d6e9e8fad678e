package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestConnectorActionPagesAreSignedInAndOwnerChecked: the pages the
// connector's link-only tools open send an anonymous browser to sign in,
// refuse another account's business (403) and a missing one (404), and
// show the owner the action without doing it.
func TestConnectorActionPagesAreSignedInAndOwnerChecked(t *testing.T) {
	w := newWorld(t)
	archive := "/dashboard?conglomerate_id=" + w.adaCong + "&company_id=" + w.adaCo + "&action=archive_business"

	rec := w.page(http.MethodGet, archive, "", nil)
	assert.Equal(t, http.StatusFound, rec.Code, "an anonymous browser signs in first")
	assert.Contains(t, rec.Header().Get("Location"), "login")

	rec = w.page(http.MethodGet, archive, w.sso[userB], nil)
	assert.Equal(t, http.StatusForbidden, rec.Code, "another account's business")
	rec = w.page(http.MethodGet, "/dashboard?company_id=00000000-0000-4000-8000-000000000000&action=archive_business", w.sso[userA], nil)
	assert.Equal(t, http.StatusNotFound, rec.Code)
	rec = w.page(http.MethodGet, "/dashboard?conglomerate_id="+w.adaCong+"&action=change_auto_topup", w.sso[userB], nil)
	assert.Equal(t, http.StatusForbidden, rec.Code, "another account's billing")

	rec = w.page(http.MethodGet, archive, w.sso[userA], nil)
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "archive_business")
	assert.Contains(t, rec.Body.String(), "irreversible")
	var co map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo, userA, "", http.StatusOK, &co)
	assert.Equal(t, "active", co["status"], "opening the page changes nothing")

	rec = w.page(http.MethodGet, "/dashboard?action=bogus", w.sso[userA], nil)
	assert.Equal(t, http.StatusNotFound, rec.Code)
	rec = w.page(http.MethodGet, "/dashboard", "", nil)
	assert.Equal(t, http.StatusOK, rec.Code, "the landing page without an action")
}
