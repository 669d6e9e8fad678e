package files_test

import (
	"io"
	"log/slog"

	"holdco/store"
)

type storeScope = store.CompanyScope

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
