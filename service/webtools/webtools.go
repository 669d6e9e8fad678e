// Package webtools holds the paid provider acts the agents (and the
// connector's assistants) use: web research and image generation. Each
// is paid by billing's one rule for billable acts (PayForAct: held before
// the provider is called, charged once per call) and keyed by the call,
// so the same call made again pays nothing more and, for an image, finds
// the file it stored instead of generating another.
package webtools

import (
	"bytes"
	"context"
	"strings"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/files"
)

// Searcher searches the web (a provider adapter, app/tools.go).
type Searcher interface {
	Search(ctx context.Context, query string, maxResults int) ([]Result, error)
}

// ImageMaker makes images (a provider adapter, providers/imagegen).
type ImageMaker interface {
	Generate(ctx context.Context, prompt, size string) (png []byte, err error)
}

// Result is one search result.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// CodeNotConfigured is the error of a capability whose provider this
// server has no credentials for.
const CodeNotConfigured models.ErrorCode = "not_configured"

// Act names, as billing's price list has them.
const (
	ActWebResearch   = "web_research"
	ActGenerateImage = "generate_image"
)

// Service is the paid web acts.
type Service struct {
	core    *service.Core
	billing *billing.Service
	files   *files.Service
	search  Searcher
	images  ImageMaker
}

// New builds the use cases; a nil provider answers its act with
// not_configured, a nil billing runs the acts unpaid (tests of the
// providers alone).
func New(core *service.Core, bill *billing.Service, fs *files.Service, search Searcher, images ImageMaker) *Service {
	return &Service{core: core, billing: bill, files: fs, search: search, images: images}
}

// NotConfigured is the refusal of an act whose provider is not set up.
func NotConfigured(what, setting string) *models.Error {
	return models.Errorf(CodeNotConfigured, "%s is not configured on this server (the operator sets %s).", what, setting).With("setting", setting)
}

// SearchInput is a web search.
type SearchInput struct {
	Query string
	// MaxResults is 1 to 20; 0 is 5.
	MaxResults int
}

// Search searches the web for the company, paid (billing.PayForAct).
func (s *Service) Search(ctx context.Context, companyID string, in SearchInput) ([]Result, error) {
	if s.search == nil {
		return nil, NotConfigured("Web research", "HOLDCO_RESEARCH_API_KEY")
	}
	if strings.TrimSpace(in.Query) == "" {
		return nil, models.Errorf(models.CodeInvalidArgument, "query is empty.").WithField("query")
	}
	n := in.MaxResults
	if n == 0 {
		n = 5
	}
	if n < 1 || n > 20 {
		return nil, models.Errorf(models.CodeInvalidArgument, "max_results must be from 1 to 20.").WithField("max_results")
	}
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return nil, err
	}
	var res []Result
	err = s.pay(ctx, ac, ActWebResearch, service.EffectID(ctx, ActWebResearch), func(ctx context.Context) error {
		var err error
		res, err = s.search.Search(ctx, in.Query, n)
		return err
	})
	if res == nil {
		res = []Result{}
	}
	return res, err
}

// ImageInput is an image to make and store.
type ImageInput struct {
	Prompt string
	// Size is 1024x1024 (default), 1024x1536 or 1536x1024.
	Size string
	// Path is where the file goes; empty: images/<time>-<call>.png.
	Path string
}

// FileSource labels the images stored.
const FileSource = "agent"

// GenerateImage makes an image and stores it as a PNG among the company's
// files, paid (billing.PayForAct). A call (service.Call in ctx) that
// stored its image already — the same call made again after a crash —
// answers that file: no second image, no second charge.
func (s *Service) GenerateImage(ctx context.Context, companyID string, in ImageInput) (models.CompanyFile, error) {
	if s.images == nil {
		return models.CompanyFile{}, NotConfigured("Image generation", "HOLDCO_IMAGES_API_KEY")
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return models.CompanyFile{}, models.Errorf(models.CodeInvalidArgument, "prompt is empty.").WithField("prompt")
	}
	size := in.Size
	switch size {
	case "":
		size = "1024x1024"
	case "1024x1024", "1024x1536", "1536x1024":
	default:
		return models.CompanyFile{}, models.Errorf(models.CodeInvalidArgument, "size is one of 1024x1024, 1024x1536 and 1536x1024.").WithField("size")
	}
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.CompanyFile{}, err
	}
	ctx = service.WithAuthorizedCompany(ctx, ac)
	effectID := service.EffectID(ctx, ActGenerateImage)
	path := in.Path
	if path == "" {
		// The call's id keeps two images of one instant apart.
		path = "images/" + s.core.Now().UTC().Format("20060102-150405") + "-" + effectID[:8] + ".png"
	}
	var f models.CompanyFile
	err = s.pay(ctx, ac, ActGenerateImage, effectID, func(ctx context.Context) error {
		stored, ok, err := s.files.StoredByCall(ctx, ac.ID)
		if err != nil || ok {
			f = stored
			return err
		}
		png, err := s.images.Generate(ctx, in.Prompt, size)
		if err != nil {
			return err
		}
		f, err = s.files.Upload(ctx, ac.ID, files.UploadInput{Path: path, Source: FileSource, Filename: files.Name(path),
			ContentType: "image/png", Size: int64(len(png)), Body: bytes.NewReader(png)})
		return err
	})
	return f, err
}

// pay runs effect as the act, paid when billing is set.
func (s *Service) pay(ctx context.Context, ac service.AuthorizedCompany, act, effectID string, effect func(context.Context) error) error {
	if s.billing == nil {
		return effect(ctx)
	}
	return s.billing.PayForAct(ctx, ac, act, effectID, effect)
}
