// Package research is the web search adapter of the agents' web_research
// tool: the Brave Search API's web search (GET <base>/web/search?q=…&count=…
// with the X-Subscription-Token header, answering
// {"web":{"results":[{"title","url","description"}]}}).
package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"holdco/models"
)

// DefaultBaseURL is the Brave Search API up to its version.
const DefaultBaseURL = "https://api.search.brave.com/res/v1"

// MaxResults is the most results Brave answers in one call.
const MaxResults = 20

// Timeout bounds one search.
const Timeout = 20 * time.Second

// maxBody bounds the answer read (a page of 20 results is far smaller).
const maxBody = 4 << 20

// Result is one web page found.
type Result struct {
	Title   string
	URL     string
	Snippet string
}

// Brave searches with the Brave Search API.
type Brave struct {
	key    string
	base   string
	client *http.Client
}

// NewBrave returns the adapter; baseURL "" is DefaultBaseURL, client nil
// a client with Timeout.
func NewBrave(apiKey, baseURL string, client *http.Client) (*Brave, error) {
	if apiKey == "" {
		return nil, errors.New("research: an API key is required")
	}
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	if client == nil {
		client = &http.Client{Timeout: Timeout}
	}
	return &Brave{key: apiKey, base: strings.TrimRight(baseURL, "/"), client: client}, nil
}

// Search answers at most maxResults (1 to MaxResults) pages for query.
// The provider's failures are upstream_unavailable (rate_limited when it
// says so), with its message.
func (b *Brave) Search(ctx context.Context, query string, maxResults int) ([]Result, error) {
	maxResults = min(max(maxResults, 1), MaxResults)
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	u := b.base + "/web/search?" + url.Values{"q": {query}, "count": {strconv.Itoa(maxResults)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("research: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, models.Errorf(models.CodeUpstreamUnavailable, "The web search provider could not be reached.")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, models.Errorf(models.CodeUpstreamUnavailable, "The web search provider's answer was cut off.")
	}
	if resp.StatusCode != http.StatusOK {
		return nil, providerError(resp, body)
	}
	var out struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, models.Errorf(models.CodeUpstreamUnavailable, "The web search provider answered something other than search results.")
	}
	res := []Result{}
	for _, r := range out.Web.Results {
		if len(res) == maxResults {
			break
		}
		res = append(res, Result{Title: plain(r.Title), URL: r.URL, Snippet: plain(r.Description)})
	}
	return res, nil
}

// providerError is a non-200 answer as the tool's error.
func providerError(resp *http.Response, body []byte) error {
	var e struct {
		Error struct {
			Detail string `json:"detail"`
			Code   string `json:"code"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil && e.Error.Detail != "" {
		msg = ": " + e.Error.Detail
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		me := models.Errorf(models.CodeRateLimited, "The web search provider's rate limit is reached; try again later%s.", strings.TrimSuffix(msg, "."))
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			me = me.With("retry_after_seconds", s)
		}
		return me
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return models.Errorf(models.CodeUpstreamUnavailable, "The web search provider refused this server's key (the operator checks HOLDCO_RESEARCH_API_KEY)%s.", strings.TrimSuffix(msg, "."))
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout:
		return models.Errorf(models.CodeInvalidArgument, "The web search provider refused the query (HTTP %d)%s.", resp.StatusCode, strings.TrimSuffix(msg, ".")).WithField("query")
	}
	return models.Errorf(models.CodeUpstreamUnavailable, "The web search provider failed (HTTP %d)%s.", resp.StatusCode, strings.TrimSuffix(msg, "."))
}

var tags = regexp.MustCompile(`<[^>]*>`)

// plain is Brave's text (titles and descriptions carry <strong> marks and
// HTML entities) as plain text.
func plain(s string) string {
	return strings.TrimSpace(html.UnescapeString(tags.ReplaceAllString(s, "")))
}
