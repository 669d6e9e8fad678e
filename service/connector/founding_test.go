package connector_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/connector"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
)

// TestCreateBusinessIsTheBusinessStart: the connector's create_business
// maps to the one business start: it answers the business with the
// welcome credits and the provisioning first pass, shares the account's
// business limit and welcome credits with REST's creation, and answers
// the start's refusals with their numbers.
func TestCreateBusinessIsTheBusinessStart(t *testing.T) {
	e := servicetest.NewWith(t, usecases.Options{FoundingLimits: founding.Limits{BusinessLimit: 2}})
	ada, cong := e.User(t, "ada@example.com")
	p, ok := service.PrincipalFrom(ada)
	require.True(t, ok)
	p.Credential, p.ClientID = service.CredentialOAuthAccess, "client-1"
	assistant := service.WithPrincipal(context.Background(), p)
	conn := connector.New(connector.Deps{Core: e.Svc.Files.Core(), Companies: e.Svc.CompaniesUseCases, Billing: e.Svc.BillingUseCases,
		Turns: e.Svc.Turns, Files: e.Svc.Files, Sales: e.Svc.SalesUseCases, Tools: e.Svc.Tools, Founding: e.Svc.Founding})

	created, err := conn.CreateBusiness(assistant, founding.CreateBusinessInput{Idea: "Guided hiking maps for families", Name: "Trail Kin", Handle: "trail-kin"})
	require.NoError(t, err)
	assert.True(t, created.WelcomeCreditsGranted)
	assert.Equal(t, "trail-kin", created.Business.Handle)
	assert.Equal(t, founding.FirstPassProvisioning, created.FirstPass.Status)

	// REST's creation is the same start: the second business, no second
	// welcome.
	_, err = e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Rest Shop"})
	require.NoError(t, err)
	st, err := e.Svc.Credits(ada, cong)
	require.NoError(t, err)
	assert.EqualValues(t, billing.WelcomeCredits, st.Balance)

	// The account's limit counts both.
	_, err = conn.CreateBusiness(assistant, founding.CreateBusinessInput{Idea: "Tea for night shifts"})
	var de *models.Error
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, models.CodeBusinessLimitReached, de.Code)
	assert.Equal(t, "This account has 2 businesses and may have at most 2; archive one to start another.", de.Detail)

	// Under 12 credits (another account, its welcome credits had and
	// spent): insufficient_credits with the numbers; nothing written.
	bob, bobCong := e.User(t, "bob@example.com")
	bp, _ := service.PrincipalFrom(bob)
	bp.Credential, bp.ClientID = service.CredentialOAuthAccess, "client-1"
	bobScope := e.Store.SystemConglomerateScope(bobCong)
	_, err = e.Svc.GrantWelcomeCredits(context.Background(), bobScope)
	require.NoError(t, err)
	_, err = e.Svc.Spend(context.Background(), bobScope, "", "run-1", models.EntryTokenUsagePartial, 10)
	require.NoError(t, err)
	_, err = conn.CreateBusiness(service.WithPrincipal(context.Background(), bp), founding.CreateBusinessInput{Idea: "Bikes for couriers"})
	require.True(t, errors.As(err, &de), "%v", err)
	assert.Equal(t, models.CodeInsufficientCredits, de.Code)
	assert.EqualValues(t, billing.MinCreditsToStart, de.Extra["needed"])
	assert.EqualValues(t, 5, de.Extra["balance"])
	bobs, err := e.Svc.ListCompanies(bob, bobCong)
	require.NoError(t, err)
	assert.Empty(t, bobs)
}
