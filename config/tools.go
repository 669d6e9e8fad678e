package config

// Tools are the providers of the agents' (and the connector's) research
// and image tools; each tool answers not_configured until its provider is
// set.
type Tools struct {
	// ResearchAPIKey is the Brave Search API key of web_research; empty:
	// not configured.
	ResearchAPIKey string
	// ResearchBaseURL overrides the Brave Search API's address (up to
	// /res/v1).
	ResearchBaseURL string
	// ImagesAPIKey is the key of the OpenAI-compatible Images API of
	// generate_image; may be empty with ImagesBaseURL (a local server).
	ImagesAPIKey string
	// ImagesBaseURL is any compatible server up to /v1; empty uses
	// OpenAI's.
	ImagesBaseURL string
	ImagesModel   string
}

// ResearchEnabled reports whether web_research has a provider.
func (t Tools) ResearchEnabled() bool { return t.ResearchAPIKey != "" }

// ImagesEnabled reports whether generate_image has a provider.
func (t Tools) ImagesEnabled() bool { return t.ImagesAPIKey != "" || t.ImagesBaseURL != "" }

func loadTools(e environment) (Tools, error) {
	t := Tools{ResearchAPIKey: e.get("HOLDCO_RESEARCH_API_KEY"), ImagesAPIKey: e.get("HOLDCO_IMAGES_API_KEY"), ImagesModel: e.get("HOLDCO_IMAGES_MODEL")}
	var err error
	if t.ResearchBaseURL, err = e.url("HOLDCO_RESEARCH_BASE_URL"); err != nil {
		return t, err
	}
	if t.ImagesBaseURL, err = e.url("HOLDCO_IMAGES_BASE_URL"); err != nil {
		return t, err
	}
	if t.ResearchBaseURL != "" && t.ResearchAPIKey == "" {
		return t, &Error{"HOLDCO_RESEARCH_API_KEY", "is required with HOLDCO_RESEARCH_BASE_URL"}
	}
	return t, nil
}
