package devoidc

import (
	"context"
	"time"
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

// Window is a fixed window of attempts: at most Limit in each Every.
type Window struct {
	Name  string
	Every time.Duration
	Limit int64
}

// AttemptRows is where StoredAttempts counts (holdco's store, adapted by
// the app): Count counts an attempt under key unless the window is full
// (limited, with the wait until it ends; the attempt is then not counted);
// Full only reports whether it is.
type AttemptRows interface {
	Count(ctx context.Context, key string, at time.Time, w Window) (wait time.Duration, limited bool, err error)
	Full(ctx context.Context, key string, at time.Time, w Window) (wait time.Duration, full bool, err error)
}

// StoredAttempts counts attempts in database rows, so every replica
// counts the same attempts.
type StoredAttempts struct {
	Rows AttemptRows
	Now  func() time.Time
}

var _ Attempts = StoredAttempts{}

var (
	addressWindow = Window{Name: "dev_idp_password/addr/1m", Every: time.Minute, Limit: AttemptsPerAddressPerMinute}
	emailWindow   = Window{Name: "dev_idp_password/email/15m", Every: WrongPasswordWindow, Limit: WrongPasswordsPerEmail}
)

func (s StoredAttempts) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s StoredAttempts) Attempt(ctx context.Context, addr, email string) (time.Duration, error) {
	if wait, full, err := s.Rows.Full(ctx, "email:"+email, s.now(), emailWindow); err != nil || full {
		return wait, err
	}
	wait, limited, err := s.Rows.Count(ctx, "addr:"+addr, s.now(), addressWindow)
	if err != nil || !limited {
		return 0, err
	}
	return max(wait, time.Second), nil
}

func (s StoredAttempts) WrongPassword(ctx context.Context, email string) error {
	// Already full (limited): Attempt refuses the next one.
	_, _, err := s.Rows.Count(ctx, "email:"+email, s.now(), emailWindow)
	return err
}
