package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0034ClusterShared adds what the processes of a cluster share
// besides their rows: leases (which process runs a background sweep) and
// rate_buckets (token buckets of the limits counted once per cluster).
func migration0034ClusterShared() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0034_cluster_shared",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0034Lease{}, &m0034RateBucket{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("leases", "rate_buckets")
		},
	}
}

type m0034Lease struct {
	Name      string    `gorm:"primaryKey;size:64"`
	Holder    string    `gorm:"size:128;not null"`
	ExpiresAt time.Time `gorm:"not null"`
}

func (m0034Lease) TableName() string { return "leases" }

type m0034RateBucket struct {
	Name      string    `gorm:"primaryKey;size:64;index:idx_rate_buckets_full,priority:1"`
	KeyHash   string    `gorm:"primaryKey;size:64"`
	Tokens    float64   `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
	FullAt    time.Time `gorm:"not null;index:idx_rate_buckets_full,priority:2"`
}

func (m0034RateBucket) TableName() string { return "rate_buckets" }
