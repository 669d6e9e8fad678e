// Package contract is what the rest of holdco knows about its workflows:
// the task queue, workflow, signal and query names, workflow ids, inputs and
// results, and search-attribute keys. The service layer and the adapters
// start, signal and query workflows through it alone; workflows/ and
// activities/ implement it. It imports nothing of the worker (no
// go.temporal.io/sdk/workflow, no sdk/worker, no activities), so importing
// it never links the workflow code. The one client call it holds is
// SignalAds, the ad reconciler's signal-with-start that growth, billing
// (after a grant) and the growth sweeper all send.
package contract

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
)

// TaskQueue is the queue holdco's worker polls.
const TaskQueue = "holdco"

// Search attributes let operators filter work in the Temporal UI, e.g.
// `ProvisioningState = "failed"` or `CompanyId = "…"`.
var (
	CompanyIDKey         = temporal.NewSearchAttributeKeyKeyword("CompanyId")
	ConglomerateIDKey    = temporal.NewSearchAttributeKeyKeyword("ConglomerateId")
	ProvisioningStateKey = temporal.NewSearchAttributeKeyKeyword("ProvisioningState")
)

// Values of ProvisioningStateKey.
const (
	ProvisioningStateProvisioning = "provisioning"
	ProvisioningStateReady        = "ready"
	ProvisioningStateFailed       = "failed"
)

// SearchAttributes lists the custom attributes a namespace must have before
// holdco's workflows start; the app registers them at start-up.
func SearchAttributes() map[string]enumspb.IndexedValueType {
	return map[string]enumspb.IndexedValueType{
		CompanyIDKey.GetName():         enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		ConglomerateIDKey.GetName():    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
		ProvisioningStateKey.GetName(): enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	}
}
