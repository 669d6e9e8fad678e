package models

import (
	"time"

	"gorm.io/gorm"
)

// DevIdPUser is a local user of the embedded development identity
// provider. Its ID is the subject the provider asserts, so it must survive
// restarts.
type DevIdPUser struct {
	ID           string `gorm:"primaryKey;size:36"`
	Email        string `gorm:"size:320;not null;uniqueIndex:idx_dev_idp_users_email"`
	Name         string `gorm:"size:200;not null"`
	PasswordHash []byte `gorm:"not null"`
	CreatedAt    time.Time
}

func (u *DevIdPUser) BeforeCreate(*gorm.DB) error { ensureID(&u.ID); return nil }

// TableName pins the table name (gorm would derive dev_id_p_users).
func (DevIdPUser) TableName() string { return "dev_idp_users" }

// DevIdPAuthRequest is a sign-in in progress at the development identity
// provider: the client's authorization request, then the user who signed
// in and the hash of the code issued for it. It is kept in the database
// so that any API process can finish a sign-in another one started; it
// lives until ExpiresAt or until its code is redeemed.
type DevIdPAuthRequest struct {
	ID       string `gorm:"primaryKey;size:36"`
	ClientID string `gorm:"size:255;not null"`
	// Request is the OpenID authorization request (JSON).
	Request  string  `gorm:"not null"`
	CodeHash *string `gorm:"size:64;uniqueIndex:idx_dev_idp_auth_requests_code"`
	UserID   string  `gorm:"size:36;not null"`
	Done     bool    `gorm:"not null"`
	AuthTime *time.Time
	// CreatedAt and ExpiresAt bound the sign-in.
	CreatedAt time.Time `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null;index:idx_dev_idp_auth_requests_expires_at"`
}

func (DevIdPAuthRequest) TableName() string { return "dev_idp_auth_requests" }

// DevIdPToken is an access token the development identity provider
// issued (its id: the token handed out is that id encrypted with the
// subject), for its userinfo endpoint on any API process.
type DevIdPToken struct {
	ID       string `gorm:"primaryKey;size:36"`
	Subject  string `gorm:"size:36;not null"`
	ClientID string `gorm:"size:255;not null"`
	// Scopes are space-separated.
	Scopes    string    `gorm:"size:1000;not null"`
	CreatedAt time.Time `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null;index:idx_dev_idp_tokens_expires_at"`
}

func (DevIdPToken) TableName() string { return "dev_idp_tokens" }
