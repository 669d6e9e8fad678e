package files

import (
	"context"
	"fmt"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// The files' events of the company's activity feed, written in the
// transaction of the change they describe.

func fileUploaded(ctx context.Context, f models.CompanyFile, replaced bool) models.ActivityInput {
	verb := "Uploaded"
	if replaced {
		verb = "Replaced"
	}
	return models.ActivityInput{Kind: models.ActivityFileUploaded, Actor: service.ActorOf(ctx), Subject: f.ID,
		Summary: fmt.Sprintf("%s %s (%d bytes)", verb, f.Path, f.SizeBytes),
		Data:    map[string]any{"path": f.Path, "size_bytes": f.SizeBytes, "replaced": replaced, "source": f.Source}}
}

func fileDeleted(ctx context.Context, f models.CompanyFile) models.ActivityInput {
	return models.ActivityInput{Kind: models.ActivityFileDeleted, Actor: service.ActorOf(ctx), Subject: f.ID,
		Summary: "Deleted " + f.Path, Data: map[string]any{"path": f.Path, "size_bytes": f.SizeBytes}}
}

func filesDeleted(ctx context.Context, prefix string, deleted []models.CompanyFile) models.ActivityInput {
	var bytes int64
	for _, f := range deleted {
		bytes += f.SizeBytes
	}
	return models.ActivityInput{Kind: models.ActivityFilesDeleted, Actor: service.ActorOf(ctx), Subject: prefix,
		Summary: fmt.Sprintf("Deleted the folder %s (%d files)", prefix, len(deleted)),
		Data:    map[string]any{"prefix": prefix, "deleted_count": len(deleted), "deleted_bytes": bytes}}
}

func recordActivity(ctx context.Context, tx *store.Store, scope store.CompanyScope, a models.ActivityInput) error {
	return tx.Companies().RecordActivity(ctx, scope, a)
}
