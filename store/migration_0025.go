package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0025SignInCodeExpiry indexes the expiry of the sign-in codes
// (browser login codes, CLI loopback codes, device-flow grants), so the
// sweep that deletes expired ones reads only those.
func migration0025SignInCodeExpiry() *gormigrate.Migration {
	indexes := [][2]string{
		{"web_login_codes", "idx_web_login_codes_expires_at"},
		{"cli_auth_codes", "idx_cli_auth_codes_expires_at"},
		{"device_authorizations", "idx_device_authorizations_expires_at"},
	}
	return &gormigrate.Migration{
		ID: "0025_sign_in_code_expiry",
		Migrate: func(tx *gorm.DB) error {
			for _, ix := range indexes {
				if err := tx.Exec("CREATE INDEX " + ix[1] + " ON " + ix[0] + " (expires_at)").Error; err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			for _, ix := range indexes {
				if err := tx.Exec("DROP INDEX " + ix[1]).Error; err != nil {
					return err
				}
			}
			return nil
		},
	}
}
