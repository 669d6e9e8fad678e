package app_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"holdco/app"
	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
)

// BenchmarkProvisioning measures the wall time from creating a company to
// all three resources ready on the embedded default (SQLite, embedded
// Temporal, local adapters): one company at a time, and 20 at once.
// Run with: go test -run '^$' -bench Provisioning -benchtime 3x ./app/
func BenchmarkProvisioning(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.Start(ctx, embeddedConfig(b, b.TempDir(), nil), app.AllRoles, quietLogger())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { cancel(); _ = a.Run(ctx) }()
	user, cong, err := a.Store.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "bench@example.com", NormalizedEmail: "bench@example.com", Name: "Bench"}, "Bench")
	if err != nil {
		b.Fatal(err)
	}
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialPersonal, CredentialID: "bench", UserID: user.ID, ConglomerateID: cong.ID})
	n := 0
	provision := func() error {
		n++
		c, err := a.Service.Companies.CreateCompany(as, cong.ID, companies.CompanyInput{Name: "Bench " + strconv.Itoa(n)})
		if err != nil {
			return err
		}
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			views, err := a.Service.Companies.CompanyResources(as, c.ID)
			if err != nil {
				return err
			}
			ready := 0
			for _, v := range views {
				if v.Status == models.ResourceReady {
					ready++
				}
			}
			if ready == len(views) {
				return nil
			}
		}
		return fmt.Errorf("company %s not ready", c.ID)
	}
	for _, concurrent := range []int{1, 20} {
		b.Run(fmt.Sprintf("companies=%d", concurrent), func(b *testing.B) {
			for b.Loop() {
				var wg sync.WaitGroup
				errs := make([]error, concurrent)
				for i := range concurrent {
					wg.Go(func() { errs[i] = provision() })
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
