package app

import (
	"fmt"
	"path/filepath"

	"holdco/providers/ads"
	"holdco/providers/registrar"
	"holdco/service/growth"
)

// growthProviders builds the local registrar and the ads simulator: both
// keep their records under the data dir, shared by the api (search,
// panel) and worker (orders, campaigns) processes like the local blob
// store. A real registrar or ads network adapter replaces them here.
func (a *App) growthProviders() (growth.Registrar, growth.Ads, error) {
	reg, err := registrar.NewLocal(filepath.Join(a.cfg.DataDir, "registrar"), a.cfg.Growth.RegistrarDelay, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	sim, err := ads.NewSimulator(filepath.Join(a.cfg.DataDir, "ads"), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	return reg, sim, nil
}
