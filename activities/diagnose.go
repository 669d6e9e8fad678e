package activities

import (
	"context"
	"sync"
	"time"

	"holdco/models"
	"holdco/workflows/contract"
)

// CheckTimeout bounds one resource check.
const CheckTimeout = 10 * time.Second

// CheckCompanyResources really checks the listed resources of one company
// (the repository reads, the database accepts a connection, the site
// answers), side by side. A failed check is a result, not an error: the
// activity fails only when it was interrupted.
func (p *Provisioning) CheckCompanyResources(ctx context.Context, in contract.CompanyCheck) (contract.CompanyCheckResult, error) {
	c := models.Company{ID: in.CompanyID, Handle: in.Handle}
	errs := make([]error, len(in.Kinds))
	var wg sync.WaitGroup
	for i, kind := range in.Kinds {
		wg.Go(func() {
			checkCtx, cancel := context.WithTimeout(ctx, CheckTimeout)
			defer cancel()
			errs[i] = p.CheckResource(checkCtx, c, kind)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return contract.CompanyCheckResult{}, interrupted(ctx, "check resources", ctx.Err())
	}
	res := contract.CompanyCheckResult{CompanyID: in.CompanyID, Problems: map[models.ResourceKind]string{}}
	for i, err := range errs {
		if err != nil {
			res.Problems[in.Kinds[i]] = err.Error()
		}
	}
	return res, nil
}
