package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"holdco/models"
	"holdco/store"
)

// CountAttempt counts one attempt of key (an address, a mailbox) against
// the windows in the database, so every replica counts the same attempts.
// A full window answers rate_limited with retry_after_seconds (REST sends
// it as Retry-After); what names the attempts in the message.
func CountAttempt(ctx context.Context, st *store.Store, now time.Time, what, key string, windows ...store.AttemptWindow) error {
	wait, err := st.Identity().CountAttempt(ctx, key, now, windows...)
	if errors.Is(err, store.ErrRateLimited) {
		return ErrTooManyAttempts(what, wait)
	}
	return err
}

// ErrTooManyAttempts is the rate_limited error of CountAttempt.
func ErrTooManyAttempts(what string, wait time.Duration) *models.Error {
	secs := max(int64(math.Ceil(wait.Seconds())), 1)
	return models.Errorf(models.CodeRateLimited, "%s. Retry in %s.", what, retryIn(secs)).With("retry_after_seconds", secs)
}

func retryIn(secs int64) string {
	if secs < 120 {
		return fmt.Sprintf("%d s", secs)
	}
	return fmt.Sprintf("%d min", (secs+59)/60)
}
