package app

import (
	"context"
	"fmt"

	"holdco/config"
	"holdco/providers/imagegen"
	"holdco/providers/research"
	"holdco/service/webtools"
)

// toolProviders builds the providers of the agents' (and the connector's)
// web_research and generate_image from the Tools settings; an unset one
// stays nil and its tool answers not_configured.
func toolProviders(cfg config.Tools) (webtools.Searcher, webtools.ImageMaker, error) {
	var r webtools.Searcher
	var im webtools.ImageMaker
	if cfg.ResearchEnabled() {
		b, err := research.NewBrave(cfg.ResearchAPIKey, cfg.ResearchBaseURL, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("HOLDCO_RESEARCH_API_KEY: %w", err)
		}
		r = researchTools{b}
	}
	if cfg.ImagesEnabled() {
		g, err := imagegen.New(imagegen.Config{APIKey: cfg.ImagesAPIKey, BaseURL: cfg.ImagesBaseURL, Model: cfg.ImagesModel})
		if err != nil {
			return nil, nil, fmt.Errorf("HOLDCO_IMAGES_API_KEY: %w", err)
		}
		im = g
	}
	return r, im, nil
}

// researchTools adapts the search provider to web_research.
type researchTools struct{ b *research.Brave }

func (r researchTools) Search(ctx context.Context, query string, maxResults int) ([]webtools.Result, error) {
	res, err := r.b.Search(ctx, query, maxResults)
	out := make([]webtools.Result, len(res))
	for i, x := range res {
		out[i] = webtools.Result{Title: x.Title, URL: x.URL, Snippet: x.Snippet}
	}
	return out, err
}
