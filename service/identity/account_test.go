package identity_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
)

const testWebhookSecret = "whsec_service_test"

// recordingPayments is the stripe-mock adapter, recording what account
// deletion asks of it.
type recordingPayments struct {
	billing.Payments
	mu          sync.Mutex
	cancelled   []string
	deactivated []string
}

func (r *recordingPayments) CancelSubscription(ctx context.Context, id string) error {
	r.mu.Lock()
	r.cancelled = append(r.cancelled, id)
	r.mu.Unlock()
	return r.Payments.CancelSubscription(ctx, id)
}

func (r *recordingPayments) DeactivateCompany(ctx context.Context, id string) error {
	r.mu.Lock()
	r.deactivated = append(r.deactivated, id)
	r.mu.Unlock()
	return r.Payments.DeactivateCompany(ctx, id)
}

// TestDeleteAccountStopsCompanyKeysAndPayments: deleting an account stops
// its companies' keys at once (not after the key cache's minute), cancels
// its platform subscription and deactivates its companies' payment
// objects at the provider.
func TestDeleteAccountStopsCompanyKeysAndPayments(t *testing.T) {
	pay := &recordingPayments{Payments: testenv.StripePayments(t, testWebhookSecret)}
	e := servicetest.NewWith(t, usecases.Options{Payments: pay})
	ada, cong := e.User(t, "ada@example.com")
	c, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	paused, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Later", Paused: true})
	require.NoError(t, err)
	key, err := e.Svc.CompanyAPIKey(ada, c.ID)
	require.NoError(t, err)
	_, err = e.Svc.Authenticate(context.Background(), key.Key) // now cached
	require.NoError(t, err)
	require.NoError(t, e.Store.SetSubscription(context.Background(), cong, "cus_del", "sub_del", models.PlanFounder, models.SubscriptionActive, nil))

	require.NoError(t, e.Svc.DeleteAccount(ada))

	_, err = e.Svc.Authenticate(context.Background(), key.Key)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "the company key stops at once: %v", err)
	assert.Equal(t, []string{"sub_del"}, pay.cancelled)
	assert.ElementsMatch(t, []string{c.ID, paused.ID}, pay.deactivated)
}
