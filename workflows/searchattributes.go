// Package workflows holds holdco's Temporal workflows. Workflows are
// deterministic; side effects live in activities/.
package workflows

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Search attributes let operators filter work in the Temporal UI, e.g.
// `ProvisioningState = "failed"` or `CompanyId = "…"`.
var (
	CompanyIDKey         = temporal.NewSearchAttributeKeyKeyword("CompanyId")
	ConglomerateIDKey    = temporal.NewSearchAttributeKeyKeyword("ConglomerateId")
	ProvisioningStateKey = temporal.NewSearchAttributeKeyKeyword("ProvisioningState")
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

// TaskQueue is the queue holdco's worker polls.
const TaskQueue = "holdco"

// EnsureSearchAttributes registers holdco's custom search attributes on the
// namespace when they are missing (a no-op when they exist).
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	existing, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for name, typ := range SearchAttributes() {
		if _, ok := existing.GetCustomAttributes()[name]; !ok {
			missing[name] = typ
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}
