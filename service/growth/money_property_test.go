package growth_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/service/servicetest"
	"holdco/store"
	"holdco/testenv"
)

// TestNoUserActionsMintCredits is the money property: with payments off
// (the embedded default) no sequence of what an account's people, its
// agents' workflows and strangers can do — domain checkouts, confirming
// them on the local page (again and again), registrations that succeed or
// fail, checkouts expiring, ad caps set and reconciled across days,
// payment webhooks without a valid signature — ever leaves the balance
// above what was granted from outside (here an operator's grant; no money
// was received). Refunds give back at most what was spent.
func TestNoUserActionsMintCredits(t *testing.T) {
	ctx := context.Background()
	const granted = 40
	accounts := 0
	rapid.Check(t, func(rt *rapid.T) {
		accounts++
		// Its own clock (days pass in each sequence) and its own store,
		// closed when the sequence ends.
		it := testenv.NewIteration(t)
		defer it.End()
		e := servicetest.New(it)
		user, cong := e.User(it, fmt.Sprintf("prop%d@example.com", accounts))
		var cos []string
		for i := range 2 {
			co := e.SeedCompany(it, user, companies.CompanyInput{Name: fmt.Sprintf("Prop %d %d", accounts, i), Mission: "Sell tea."})
			cos = append(cos, co.ID)
		}
		congScope := e.Store.SystemConglomerateScope(cong)
		_, err := e.Svc.GrantCredits(ctx, congScope, models.EntryAdminAdjustment, granted, "operator")
		require.NoError(rt, err)
		w := &world{e: e, ada: user, adaCong: cong}
		names := []string{freeName(it, w, cos[0], fmt.Sprintf("propa%d", accounts)), freeName(it, w, cos[0], fmt.Sprintf("propb%d", accounts))}
		var links []string     // local confirmation tokens
		var purchases []string // purchase ids
		companyOf := rapid.SampledFrom(cos)
		companyScope := func(id string) store.CompanyScope {
			sc, err := e.Store.SystemCompanyScope(ctx, id)
			require.NoError(rt, err)
			return sc
		}
		rt.Repeat(map[string]func(*rapid.T){
			"checkout": func(rt *rapid.T) {
				c, err := e.Svc.Growth.CreateCheckout(user, companyOf.Draw(rt, "company"), growth.CheckoutInput{Domain: rapid.SampledFrom(names).Draw(rt, "name")})
				if err != nil {
					require.True(rt, models.IsCode(err, models.CodeConflict), "%v", err)
					return
				}
				u, err := url.Parse(c.URL)
				require.NoError(rt, err)
				links = append(links, u.Query().Get("t"))
				purchases = append(purchases, c.Purchase.ID)
			},
			"confirm": func(rt *rapid.T) {
				if len(links) == 0 {
					rt.Skip("no checkout")
				}
				_, err := e.Svc.Growth.ConfirmLocalCheckout(ctx, rapid.SampledFrom(links).Draw(rt, "link"))
				if err != nil {
					require.True(rt, models.IsCode(err, models.CodeNotFound), "%v", err)
				}
			},
			"registrar answers": func(rt *rapid.T) {
				if len(purchases) == 0 {
					rt.Skip("no purchase")
				}
				_, err := e.Svc.Growth.FinishPurchase(ctx, congScope, rapid.SampledFrom(purchases).Draw(rt, "purchase"), rapid.Bool().Draw(rt, "registered"), "registry said no")
				require.NoError(rt, err)
			},
			"time passes": func(rt *rapid.T) {
				e.Clock.Advance(time.Duration(rapid.IntRange(1, 150).Draw(rt, "minutes")) * time.Minute)
				_, err := (&growth.Sweeper{Store: e.Store, Now: e.Clock.Now}).ExpireCheckouts(ctx)
				require.NoError(rt, err)
			},
			"set ad cap": func(rt *rapid.T) {
				_, err := e.Svc.Growth.SetDailyCap(user, companyOf.Draw(rt, "company"), rapid.SampledFrom([]int64{0, 3, 7, 30, 150}).Draw(rt, "cap"))
				if err != nil {
					require.True(rt, models.IsCode(err, models.CodeInsufficientCredits), "%v", err)
				}
			},
			"reconcile ads": func(rt *rapid.T) {
				_, err := e.Svc.Growth.Reconcile(ctx, companyScope(companyOf.Draw(rt, "company")), congScope, e.Clock.Now())
				require.NoError(rt, err)
			},
			"next day": func(rt *rapid.T) {
				e.Clock.Advance(24 * time.Hour)
			},
			"forged webhook": func(rt *rapid.T) {
				body := fmt.Sprintf(`{"id":"evt_%d","type":"checkout.session.completed","data":{"object":{"id":"cs_x","mode":"payment","payment_status":"paid","amount_total":99900,"metadata":{"holdco_conglomerate_id":%q,"holdco_kind":"top_up","holdco_credits":"999"}}}}`,
					rapid.Int().Draw(rt, "event"), cong)
				_, err := e.Svc.HandlePaymentWebhook(ctx, []byte(body), rapid.StringMatching(`t=[0-9]{1,10},v1=[0-9a-f]{0,64}`).Draw(rt, "signature"))
				require.Error(rt, err)
			},
			"": func(rt *rapid.T) {
				st, err := e.Svc.Credits(user, cong)
				require.NoError(rt, err)
				require.LessOrEqual(rt, st.Balance, int64(granted), "credits appeared from nowhere")
			},
		})
	})
}
