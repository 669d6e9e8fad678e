package api

import (
	"context"
	"holdco/service/billing"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// CreditLedgerLine is one line of the ledger: an entry, or the sum of one
// run's usage entries of one type.
type CreditLedgerLine struct {
	Type      string    `json:"type" example:"TOKEN_USAGE_PARTIAL"`
	Credits   int64     `json:"credits" doc:"Positive adds, negative spends; summed for a grouped line."`
	RunID     *string   `json:"run_id"`
	CompanyID *string   `json:"company_id"`
	Reference string    `json:"reference,omitempty"`
	Entries   int64     `json:"entries" doc:"How many entries the line sums (1 when not grouped)."`
	CreatedAt time.Time `json:"created_at" doc:"Time of the line's latest entry."`
	FirstAt   time.Time `json:"first_at"`
}

// CreditLedgerResponse is a page of the grouped ledger, newest first.
type CreditLedgerResponse struct {
	Balance int64              `json:"balance" doc:"Current credit balance."`
	Total   int64              `json:"total" doc:"Number of lines (groups), for paging."`
	Offset  int                `json:"offset"`
	Limit   int                `json:"limit"`
	Lines   []CreditLedgerLine `json:"lines"`
}

type creditHandlers struct{ svc *billing.Service }

func registerCreditRoutes(api huma.API, h *creditHandlers) {
	huma.Register(api, huma.Operation{OperationID: "credit-ledger", Method: http.MethodGet, Path: "/conglomerates/{conglomerate_id}/credit-ledger",
		Tags: []string{"credits"}, Summary: "Credit ledger with smart grouping", Security: bearerSecurity,
		Description: "TOKEN_USAGE_PARTIAL entries are summed per run; TOOL_USAGE entries with a run_id are summed per run; legacy TOOL_USAGE entries without a run_id and every other type are listed one by one. Paging counts lines, newest first."}, h.ledger)
}

type ledgerInput struct {
	ConglomerateID string `path:"conglomerate_id" format:"uuid"`
	Offset         int    `query:"offset" minimum:"0" default:"0"`
	Limit          int    `query:"limit" minimum:"1" maximum:"100" default:"20"`
}

type ledgerOutput struct{ Body CreditLedgerResponse }

func (h *creditHandlers) ledger(ctx context.Context, in *ledgerInput) (*ledgerOutput, error) {
	page, err := h.svc.CreditLedger(ctx, in.ConglomerateID, in.Offset, in.Limit)
	if err != nil {
		return nil, err
	}
	out := &ledgerOutput{Body: CreditLedgerResponse{Balance: page.Balance, Total: page.Total, Offset: in.Offset, Limit: in.Limit, Lines: make([]CreditLedgerLine, 0, len(page.Groups))}}
	for _, g := range page.Groups {
		out.Body.Lines = append(out.Body.Lines, CreditLedgerLine{Type: string(g.Type), Credits: g.Amount, RunID: g.RunID, CompanyID: g.CompanyID,
			Reference: g.Reference, Entries: g.Entries, CreatedAt: g.LastAt, FirstAt: g.FirstAt})
	}
	return out, nil
}
