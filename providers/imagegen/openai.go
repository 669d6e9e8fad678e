// Package imagegen is the image adapter of the agents' generate_image
// tool: the OpenAI Images API (POST <base>/images/generations) on the
// official SDK, at OpenAI or any compatible server (through BaseURL).
// It asks for one PNG as base64 and answers its bytes.
package imagegen

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"holdco/models"
)

// DefaultModel is the model asked for unless configured.
const DefaultModel = "gpt-image-1"

// Timeout bounds one generation (they take tens of seconds).
const Timeout = 3 * time.Minute

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// Config is the adapter's settings.
type Config struct {
	// APIKey may be empty for a local server at BaseURL.
	APIKey string
	// BaseURL is the API's address up to /v1; empty uses OpenAI's.
	BaseURL string
	// Model is the image model ("" is DefaultModel).
	Model string
	// HTTPClient is optional (tests).
	HTTPClient *http.Client
}

// OpenAI makes images with an OpenAI-compatible Images API.
type OpenAI struct {
	client sdk.Client
	model  string
}

// New builds the adapter; it does not call the API.
func New(cfg Config) (*OpenAI, error) {
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, errors.New("imagegen: an API key is required unless a base URL names a local server")
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(httpClient),
		// Always set, so an OPENAI_API_KEY in the environment never
		// reaches a server holdco was not configured to trust with it.
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(Timeout),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/")+"/"))
	}
	return &OpenAI{client: sdk.NewClient(opts...), model: cfg.Model}, nil
}

// Generate makes one size image of prompt and answers its PNG bytes. A
// refused prompt is invalid_argument on prompt; the provider's other
// failures are upstream_unavailable (rate_limited when it says so).
func (o *OpenAI) Generate(ctx context.Context, prompt, size string) ([]byte, error) {
	params := sdk.ImageGenerateParams{
		Prompt: prompt,
		Model:  sdk.ImageModel(o.model),
		N:      sdk.Int(1),
		Size:   sdk.ImageGenerateParamsSize(size),
	}
	if strings.HasPrefix(o.model, "dall-e") {
		// The older models answer a link unless asked for base64 (and
		// always make PNG); the GPT image models refuse response_format.
		params.ResponseFormat = sdk.ImageGenerateParamsResponseFormatB64JSON
	} else {
		params.OutputFormat = sdk.ImageGenerateParamsOutputFormatPNG
	}
	res, err := o.client.Images.Generate(ctx, params)
	if err != nil {
		return nil, classify(err)
	}
	if len(res.Data) == 0 || res.Data[0].B64JSON == "" {
		return nil, models.Errorf(models.CodeUpstreamUnavailable, "The image service answered no image.")
	}
	png, err := base64.StdEncoding.DecodeString(res.Data[0].B64JSON)
	if err != nil || !bytes.HasPrefix(png, pngSignature) {
		return nil, models.Errorf(models.CodeUpstreamUnavailable, "The image service answered something other than a PNG image.")
	}
	return png, nil
}

func classify(err error) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		if errors.Is(err, context.Canceled) {
			return err
		}
		var urlErr *url.Error
		if errors.As(err, &urlErr) || errors.Is(err, context.DeadlineExceeded) {
			return models.Errorf(models.CodeUpstreamUnavailable, "The image service could not be reached or did not answer in time.")
		}
		return models.Errorf(models.CodeUpstreamUnavailable, "The image service's answer could not be read.")
	}
	msg := strings.TrimSuffix(strings.TrimSpace(apiErr.Message), ".")
	if msg != "" {
		msg = ": " + msg
	}
	switch s := apiErr.StatusCode; {
	case s == http.StatusTooManyRequests:
		return models.Errorf(models.CodeRateLimited, "The image service's rate limit is reached; try again later%s.", msg)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return models.Errorf(models.CodeUpstreamUnavailable, "The image service refused this server's key (the operator checks HOLDCO_IMAGES_API_KEY)%s.", msg)
	case s == http.StatusBadRequest:
		e := models.Errorf(models.CodeInvalidArgument, "The image service refused the request%s.", msg)
		if apiErr.Param == "size" {
			return e.WithField("size")
		}
		return e.WithField("prompt")
	}
	return models.Errorf(models.CodeUpstreamUnavailable, "The image service failed (HTTP %d)%s.", apiErr.StatusCode, msg)
}
