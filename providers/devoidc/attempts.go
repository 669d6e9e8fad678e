package devoidc

import (
	"context"
	"errors"
	"time"

	"holdco/store"
)

// Limits of the sign-in form's password attempts. Every attempt from an
// address counts (each costs a bcrypt comparison); per email address only
// wrong passwords count, so a user who signs in often is never locked out.
const (
	AttemptsPerAddressPerMinute = 30
	WrongPasswordsPerEmail      = 10
	WrongPasswordWindow         = 15 * time.Minute
)

// Attempts limits the form's password attempts.
type Attempts interface {
	// Attempt counts an attempt from addr for email; a positive wait
	// refuses it (429 with Retry-After).
	Attempt(ctx context.Context, addr, email string) (wait time.Duration, err error)
	// WrongPassword counts a wrong password for email.
	WrongPassword(ctx context.Context, email string) error
}

// AttemptRows is where StoredAttempts counts (holdco's store).
type AttemptRows interface {
	CountAttempt(ctx context.Context, key string, at time.Time, windows ...store.AttemptWindow) (time.Duration, error)
	AttemptsFull(ctx context.Context, key string, at time.Time, windows ...store.AttemptWindow) (time.Duration, bool, error)
}

// StoredAttempts counts attempts in database rows, so every replica
// counts the same attempts.
type StoredAttempts struct {
	Rows AttemptRows
	Now  func() time.Time
}

var _ Attempts = StoredAttempts{}

var (
	addressWindow = store.AttemptWindow{Name: "dev_idp_password/addr/1m", Every: time.Minute, Limit: AttemptsPerAddressPerMinute}
	emailWindow   = store.AttemptWindow{Name: "dev_idp_password/email/15m", Every: WrongPasswordWindow, Limit: WrongPasswordsPerEmail}
)

func (s StoredAttempts) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s StoredAttempts) Attempt(ctx context.Context, addr, email string) (time.Duration, error) {
	if wait, full, err := s.Rows.AttemptsFull(ctx, "email:"+email, s.now(), emailWindow); err != nil || full {
		return wait, err
	}
	wait, err := s.Rows.CountAttempt(ctx, "addr:"+addr, s.now(), addressWindow)
	if errors.Is(err, store.ErrRateLimited) {
		return max(wait, time.Second), nil
	}
	return 0, err
}

func (s StoredAttempts) WrongPassword(ctx context.Context, email string) error {
	_, err := s.Rows.CountAttempt(ctx, "email:"+email, s.now(), emailWindow)
	if errors.Is(err, store.ErrRateLimited) {
		return nil // already full: Attempt refuses the next one
	}
	return err
}
