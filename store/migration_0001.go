package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0001IdentityAndCompanies creates users, conglomerates (accounts),
// their memberships and companies.
//
// The structs below are a snapshot of the tables as this migration creates
// them; they are not the models and must not change. Foreign keys come from
// the belongs-to fields. Memberships go with their conglomerate or user;
// conglomerates block deletion of their owner. A company outlives its
// conglomerate: deleting an account archives its companies and hard-deletes
// the conglomerate, and the archived company keeps its handle and records
// with conglomerate_id NULL.
func migration0001IdentityAndCompanies() *gormigrate.Migration {
	type user struct {
		ID              string     `gorm:"primaryKey;size:36"`
		Email           string     `gorm:"size:320;not null"`
		NormalizedEmail string     `gorm:"size:320;not null;index:idx_users_normalized_email"`
		Name            string     `gorm:"size:200;not null"`
		Issuer          *string    `gorm:"size:255;uniqueIndex:idx_users_identity,priority:1"`
		Subject         *string    `gorm:"size:255;uniqueIndex:idx_users_identity,priority:2"`
		CreatedAt       time.Time  `gorm:"not null"`
		UpdatedAt       time.Time  `gorm:"not null"`
		DeletedAt       *time.Time `gorm:"index:idx_users_deleted_at"`
	}
	type conglomerate struct {
		ID             string    `gorm:"primaryKey;size:36"`
		Name           string    `gorm:"size:200;not null"`
		OwnerUserID    string    `gorm:"size:36;not null;index:idx_conglomerates_owner_user_id"`
		OwnerUser      *user     `gorm:"foreignKey:OwnerUserID;constraint:OnDelete:RESTRICT"`
		TrialStartedAt time.Time `gorm:"not null"`
		DailyCreditCap *int64
		CreatedAt      time.Time `gorm:"not null"`
		UpdatedAt      time.Time `gorm:"not null"`
	}
	type membership struct {
		ConglomerateID string        `gorm:"primaryKey;size:36"`
		Conglomerate   *conglomerate `gorm:"foreignKey:ConglomerateID;constraint:OnDelete:CASCADE"`
		UserID         string        `gorm:"primaryKey;size:36;index:idx_memberships_user_id"`
		User           *user         `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		Role           string        `gorm:"size:16;not null"`
		CreatedAt      time.Time     `gorm:"not null"`
	}
	type company struct {
		ID             string        `gorm:"primaryKey;size:36"`
		ConglomerateID *string       `gorm:"size:36;index:idx_companies_conglomerate_id"`
		Conglomerate   *conglomerate `gorm:"foreignKey:ConglomerateID;constraint:OnDelete:SET NULL"`
		Name           string        `gorm:"size:200;not null"`
		Handle         string        `gorm:"size:64;not null;uniqueIndex:idx_companies_handle"`
		Status         string        `gorm:"size:16;not null"`
		Idea           string        `gorm:"type:text;not null"`
		Mission        string        `gorm:"type:text;not null"`
		ArchivedAt     *time.Time
		CreatedAt      time.Time `gorm:"not null"`
		UpdatedAt      time.Time `gorm:"not null"`
	}

	return &gormigrate.Migration{
		ID: "0001_identity_and_companies",
		Migrate: func(tx *gorm.DB) error {
			// One table at a time, parents first, so each foreign key has
			// its target.
			for _, table := range []any{&user{}, &conglomerate{}, &membership{}, &company{}} {
				if err := tx.Migrator().CreateTable(table); err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("companies", "memberships", "conglomerates", "users")
		},
	}
}
