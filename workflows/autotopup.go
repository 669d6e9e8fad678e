package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/workflows/contract"
)

// AutoTopUpCooldown is the least time between two charges of one account.
const AutoTopUpCooldown = 10 * time.Minute

// autoTopUpChargesPerRun bounds a run's history; more continue as new.
const autoTopUpChargesPerRun = 20

// AutoTopUp charges an account's saved card when its balance is under the
// auto top-up threshold: one charge at a time (one workflow per account,
// joined by signal-with-start), then a cooldown that absorbs the signals
// of the spends meanwhile, then one more look. It ends when no charge is
// needed and no signal waits, or when a charge cannot be made (no card, a
// decline): that is not retried, and the cooldown that follows absorbs the
// spends meanwhile, so a card is tried at most once per cooldown.
func AutoTopUp(ctx workflow.Context, in contract.AutoTopUpInput) (int, error) {
	checks := workflow.GetSignalChannel(ctx, contract.SignalAutoTopUpCheck)
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 2 * time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 3},
	})
	charges := in.Charges
	cooldown := in.Cooldown
	if cooldown <= 0 {
		cooldown = AutoTopUpCooldown
	}
	for attempt := 1; ; attempt++ {
		for checks.ReceiveAsync(nil) { // this look answers them
		}
		var out contract.AutoTopUpOutcome
		err := workflow.ExecuteActivity(ctx, (*activities.AutoTopUps).ChargeAutoTopUp,
			contract.AutoTopUpAttempt{ConglomerateID: in.ConglomerateID, Attempt: attempt}).Get(ctx, &out)
		if err != nil || out.Failed != "" {
			// Not retried: the cooldown absorbs the spends meanwhile, so a
			// declined card is tried at most once per cooldown.
			workflow.GetLogger(ctx).Warn("auto top-up: no charge", "reason", out.Failed, "error", err)
			return charges, workflow.Sleep(ctx, cooldown)
		}
		if !out.Charged {
			if checks.ReceiveAsync(nil) {
				continue // a spend came in during the look: look again
			}
			return charges, nil
		}
		charges++
		if err := workflow.Sleep(ctx, cooldown); err != nil {
			return charges, err
		}
		if attempt >= autoTopUpChargesPerRun {
			for checks.ReceiveAsync(nil) {
			}
			return charges, workflow.NewContinueAsNewError(ctx, AutoTopUp, contract.AutoTopUpInput{ConglomerateID: in.ConglomerateID, Charges: charges, Cooldown: in.Cooldown})
		}
	}
}
