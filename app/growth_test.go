package app_test

import (
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/service/servicetest"
)

// Buying a domain on the embedded default, end to end: the local checkout
// is confirmed, the workflow domain:<id> registers it with the local
// registrar, it is attached to the company that bought it, and the sites
// listener serves the company's site under it by Host; detached, it does
// not any more.
func TestDomainPurchaseEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a := runApp(t, embeddedConfig(t, t.TempDir(), map[string]string{"HOLDCO_REGISTRAR_DELAY": "0s"}), app.AllRoles...)

	user, cong, err := a.Store.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "dom@example.com", NormalizedEmail: "dom@example.com", Name: "Dom"}, "Dom")
	require.NoError(t, err)
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialPersonal, CredentialID: "t", UserID: user.ID, ConglomerateID: cong.ID})
	co, err := a.Service.Companies.CreateCompany(as, cong.ID, companies.CompanyInput{Name: "Domain Tea"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		r, err := a.Service.Companies.CompanyResources(as, co.ID)
		if err != nil {
			return false
		}
		for _, v := range r {
			if v.Status != models.ResourceReady {
				return false
			}
		}
		return true
	}, 2*time.Minute, 100*time.Millisecond, "provisioned")

	domain := servicetest.FreeDomain(t, as, a.Service.Growth, co.ID, "domaintea")
	c, err := a.Service.Growth.CreateCheckout(as, co.ID, growth.CheckoutInput{Domain: domain})
	require.NoError(t, err)
	u, err := url.Parse(c.URL)
	require.NoError(t, err)
	_, err = a.Service.Growth.ConfirmLocalCheckout(ctx, u.Query().Get("t"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		es, err := a.Service.Growth.ListDomains(as, co.ID)
		return err == nil && len(es) == 1 && es[0].State == models.DomainRegistered && es[0].AttachedHere
	}, time.Minute, 200*time.Millisecond, "registered by the workflow and attached")

	get := func() (int, string) {
		req, err := http.NewRequest(http.MethodGet, "http://"+a.SitesAddr()+"/", nil)
		require.NoError(t, err)
		req.Host = domain
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get()
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Domain Tea")
	_, err = a.Service.Growth.Detach(as, co.ID, c.Purchase.ID)
	require.NoError(t, err)
	code, _ = get()
	assert.Equal(t, http.StatusNotFound, code, "parked: served no more")
}
