package agenttools

import (
	"context"

	"holdco/service/webtools"
)

// CodeNotConfigured is the tool error of a capability whose provider this
// server has no credentials for.
const CodeNotConfigured = webtools.CodeNotConfigured

type WebResearchInput struct {
	Query      string `json:"query" jsonschema:"what to search the web for" maxLength:"400"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"at most this many results (default 5)" minimum:"1" maximum:"20"`
}

type WebResearchResult struct {
	Results []webtools.Result `json:"results"`
}

type GenerateImageInput struct {
	Prompt string `json:"prompt" jsonschema:"what the image shows" maxLength:"4000"`
	Size   string `json:"size,omitempty" jsonschema:"default 1024x1024" enum:"1024x1024,1024x1536,1536x1024"`
	Path   string `json:"path,omitempty" jsonschema:"where to store it among the company's files; default images/<time>-<call>.png" maxLength:"1024"`
}

type GeneratedImage struct {
	File File `json:"file"`
}

func notConfigured(what, setting string) error { return webtools.NotConfigured(what, setting) }

func registerResearch(c *Catalog, s *webtools.Service) {
	Register(c, "web_research", "Search the web; answers titles, links and snippets.",
		func(ctx context.Context, companyID string, in WebResearchInput) (WebResearchResult, error) {
			res, err := s.Search(ctx, companyID, webtools.SearchInput{Query: in.Query, MaxResults: in.MaxResults})
			return WebResearchResult{Results: res}, err
		})
	Register(c, "generate_image", "Generate an image from a description and store it as a PNG among the company's files.",
		func(ctx context.Context, companyID string, in GenerateImageInput) (GeneratedImage, error) {
			f, err := s.GenerateImage(ctx, companyID, webtools.ImageInput{Prompt: in.Prompt, Size: in.Size, Path: in.Path})
			return GeneratedImage{File: fileOf(f)}, err
		})
}
