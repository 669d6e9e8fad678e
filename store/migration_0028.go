package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0028AnalyticsCountry stores the unknown country as "" (the API's
// null) where capture had kept the address database's "ZZ".
func migration0028AnalyticsCountry() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0028_analytics_country",
		Migrate: func(tx *gorm.DB) error {
			for _, table := range []string{"analytics_events", "analytics_visitor_days"} {
				if err := tx.Exec("UPDATE " + table + " SET country = '' WHERE country = 'ZZ'").Error; err != nil {
					return err
				}
			}
			return nil
		},
		// Nothing to undo: "" reads as unknown before and after.
		Rollback: func(*gorm.DB) error { return nil },
	}
}
