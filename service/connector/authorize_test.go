package connector_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/connector"
	"holdco/service/servicetest"
	"holdco/store"
)

// A connector call authorizes its business once: it resolves the business
// and hands the authorized company to the use case it calls, which does
// not authorize it again. So the call runs exactly the statements of that
// use case called on its own (which authorizes once itself), named by id.
func TestConnectorCallAuthorizesItsBusinessOnce(t *testing.T) {
	e := servicetest.New(t)
	ada, _ := e.User(t, "ada@example.com")
	co := e.SeedCompany(t, ada, companies.CompanyInput{Name: "Ada Bakery"})
	conn := connector.New(connector.Deps{Core: e.Svc.Files.Core(), Companies: e.Svc.CompaniesUseCases, Billing: e.Svc.BillingUseCases,
		Turns: e.Svc.Turns, Files: e.Svc.Files, Sales: e.Svc.SalesUseCases, Tools: e.Svc.Tools})
	statements := func(call func(ctx context.Context) error) int64 {
		t.Helper()
		ctx, n := store.WithQueryCount(ada)
		require.NoError(t, call(ctx))
		return n.Load()
	}
	status := func(st models.CompanyStatus) {
		t.Helper()
		_, err := e.Svc.UpdateCompany(ada, co.ID, companies.CompanyUpdate{Status: &st})
		require.NoError(t, err)
	}

	for _, c := range []struct {
		name      string
		useCase   func(ctx context.Context) error
		connector func(ctx context.Context) error
		before    func()
	}{
		{name: "get_business",
			useCase:   func(ctx context.Context) error { _, err := e.Svc.Dashboard(ctx, co.ID); return err },
			connector: func(ctx context.Context) error { _, err := conn.GetBusiness(ctx, co.ID); return err }},
		{name: "pause_business",
			before: func() { status(models.CompanyActive) },
			useCase: func(ctx context.Context) error {
				st := models.CompanyPaused
				_, err := e.Svc.UpdateCompany(ctx, co.ID, companies.CompanyUpdate{Status: &st})
				return err
			},
			connector: func(ctx context.Context) error { _, err := conn.SetPaused(ctx, co.ID, true); return err }},
		{name: "an agent tool (list_documents)",
			useCase: func(ctx context.Context) error {
				_, err := e.Svc.Tools.Call(ctx, co.ID, "list_documents", json.RawMessage(`{}`))
				return err
			},
			connector: func(ctx context.Context) error {
				_, err := conn.CallAgentTool(ctx, co.ID, "list_documents", "", json.RawMessage(`{}`))
				return err
			}},
		{name: "an agent tool (list_tasks)",
			useCase: func(ctx context.Context) error {
				_, err := e.Svc.Tools.Call(ctx, co.ID, "list_tasks", json.RawMessage(`{}`))
				return err
			},
			connector: func(ctx context.Context) error {
				_, err := conn.CallAgentTool(ctx, co.ID, "list_tasks", "", json.RawMessage(`{}`))
				return err
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.before != nil {
				c.before()
			}
			alone := statements(c.useCase)
			if c.before != nil {
				c.before()
			}
			through := statements(c.connector)
			require.Positive(t, alone)
			require.Equal(t, alone, through, "the connector's call runs the use case's statements and no second authorization")
		})
	}
}
