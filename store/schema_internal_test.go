package store

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm/schema"

	"holdco/models"
)

// Every column a model maps must exist after the migrations: a field added
// to models/ without a migration fails here, not in production.
func TestMigrationsCoverEveryModelColumn(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "schema.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))

	m := s.db.Migrator()
	for _, model := range []any{&models.User{}, &models.Conglomerate{}, &models.Membership{}, &models.Company{},
		&models.WebSession{}, &models.APIKey{}, &models.CLIAuthCode{}, &models.WebLoginCode{}, &models.DeviceAuthorization{}, &models.AdminToken{},
		&models.InstanceSecret{}, &models.DevIdPUser{}, &models.DevIdPAuthRequest{}, &models.DevIdPToken{}, &models.CompanyAPIKey{}, &models.CompanyResource{}, &models.CompanyOIDCClient{},
		&models.CreditLedgerEntry{}, &models.CreditLedgerGroup{}, &models.CreditAccount{}, &models.CreditReservation{},
		&models.CompanyProvisioning{}, &models.CompanyCreateKey{},
		&models.ActivityEvent{}, &models.Document{}, &models.Milestone{}, &models.CompanyFile{}, &models.Email{},
		&models.Product{}, &models.CompanyPayment{}, &models.CustomerSubscription{}, &models.Task{}, &models.AdCampaign{}, &models.Turn{}} {
		sch, err := schema.Parse(model, &sync.Map{}, s.db.NamingStrategy)
		require.NoError(t, err)
		require.True(t, m.HasTable(sch.Table), "table %s", sch.Table)
		for _, f := range sch.Fields {
			if f.DBName == "" {
				continue
			}
			assert.True(t, m.HasColumn(model, f.DBName), "column %s.%s has no migration", sch.Table, f.DBName)
		}
		for _, idx := range sch.ParseIndexes() {
			assert.True(t, m.HasIndex(model, idx.Name), "index %s on %s has no migration", idx.Name, sch.Table)
		}
	}
}
