package agenttools

import (
	"bytes"
	"context"
	"strings"
	"time"

	"holdco/models"
	"holdco/service/files"
)

// Research searches the web for the agents (a provider adapter); nil:
// web_research answers not_configured.
type Research interface {
	Search(ctx context.Context, query string, maxResults int) ([]SearchResult, error)
}

// Images makes images for the agents (a provider adapter); nil:
// generate_image answers not_configured.
type Images interface {
	Generate(ctx context.Context, prompt, size string) (png []byte, err error)
}

// CodeNotConfigured is the tool error of a capability whose provider this
// server has no credentials for.
const CodeNotConfigured models.ErrorCode = "not_configured"

type WebResearchInput struct {
	Query      string `json:"query" jsonschema:"what to search the web for" maxLength:"400"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"at most this many results (default 5)" minimum:"1" maximum:"20"`
}

type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

type WebResearchResult struct {
	Results []SearchResult `json:"results"`
}

type GenerateImageInput struct {
	Prompt string `json:"prompt" jsonschema:"what the image shows" maxLength:"4000"`
	Size   string `json:"size,omitempty" jsonschema:"default 1024x1024" enum:"1024x1024,1024x1536,1536x1024"`
	Path   string `json:"path,omitempty" jsonschema:"where to store it among the company's files; default images/<time>.png" maxLength:"1024"`
}

type GeneratedImage struct {
	File File `json:"file"`
}

func notConfigured(what, setting string) *models.Error {
	return models.Errorf(CodeNotConfigured, "%s is not configured on this server (the operator sets %s).", what, setting).With("setting", setting)
}

func registerResearch(c *Catalog, r Research, images Images, fs *files.Service) {
	Register(c, "web_research", "Search the web; answers titles, links and snippets.",
		func(ctx context.Context, companyID string, in WebResearchInput) (WebResearchResult, error) {
			if r == nil {
				return WebResearchResult{}, notConfigured("Web research", "HOLDCO_RESEARCH_API_KEY")
			}
			if strings.TrimSpace(in.Query) == "" {
				return WebResearchResult{}, invalid("query", "query is empty.")
			}
			n := in.MaxResults
			if n == 0 {
				n = 5
			}
			res, err := r.Search(ctx, in.Query, n)
			if res == nil {
				res = []SearchResult{}
			}
			return WebResearchResult{Results: res}, err
		})
	Register(c, "generate_image", "Generate an image from a description and store it as a PNG among the company's files.",
		func(ctx context.Context, companyID string, in GenerateImageInput) (GeneratedImage, error) {
			if images == nil {
				return GeneratedImage{}, notConfigured("Image generation", "HOLDCO_IMAGES_API_KEY")
			}
			if strings.TrimSpace(in.Prompt) == "" {
				return GeneratedImage{}, invalid("prompt", "prompt is empty.")
			}
			size := in.Size
			if size == "" {
				size = "1024x1024"
			}
			png, err := images.Generate(ctx, in.Prompt, size)
			if err != nil {
				return GeneratedImage{}, err
			}
			path := in.Path
			if path == "" {
				path = "images/" + time.Now().UTC().Format("20060102-150405.000") + ".png"
			}
			f, err := fs.Upload(ctx, companyID, files.UploadInput{Path: path, Source: FileSource, Filename: files.Name(path),
				ContentType: "image/png", Size: int64(len(png)), Body: bytes.NewReader(png)})
			return GeneratedImage{File: fileOf(f)}, err
		})
}
