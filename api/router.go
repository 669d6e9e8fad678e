// Package api is holdco's REST adapter: gin for routing, huma for typed
// handlers, validation and the OpenAPI 3.1 document. Handlers parse,
// authenticate, call service/ and render; they hold no business rules.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"
	"github.com/gin-gonic/gin"

	"holdco/models"
	"holdco/service/usecases"
)

// Version is the REST interface version in the OpenAPI document.
const Version = "0.1.0"

// Deps is what the REST adapter needs from the rest of the process.
type Deps struct {
	Logger *slog.Logger
	// Health lists the dependencies GET /health reports on.
	Health []HealthCheck
	// Service is the use cases by domain; nil serves only health and the
	// OpenAPI document (router tests).
	Service *usecases.Services
	// SecureCookies marks cookies Secure (holdco served over https).
	SecureCookies bool
	// Mount adds handlers that live beside the API on the same listener
	// (the embedded development identity provider).
	Mount map[string]http.Handler
	// TrustedProxies may name the client's address in X-Forwarded-For
	// (analytics capture); empty trusts no proxy.
	TrustedProxies []netip.Prefix
}

// Router is the REST handler together with its huma API (for the OpenAPI
// document and for tests that register extra operations).
type Router struct {
	http.Handler
	API huma.API
	// serve is Handler answering HEAD as GET; direct the routes served
	// ahead of gin (direct.go), by path, for POST.
	serve  http.Handler
	direct map[string]http.HandlerFunc
}

// New builds the REST handler.
func New(d Deps) *Router {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	configureProcessWide()
	engine := gin.New()
	engine.HandleMethodNotAllowed = true
	engine.ContextWithFallback = true
	_ = engine.SetTrustedProxies(nil)
	sink := newErrorSink(d.Logger)
	engine.Use(recordRoute(), requestContext(sink), accessLog(d.Logger), recoverPanics(d.Logger), keepReadDeadline())
	engine.NoRoute(func(c *gin.Context) {
		writeError(c.Writer, models.CodeNotFound, "No route matches "+c.Request.Method+" "+c.Request.URL.Path+".")
	})
	engine.NoMethod(func(c *gin.Context) {
		method := c.Request.Method
		if asked, ok := c.Request.Context().Value(headRequestKey{}).(string); ok {
			method = asked
		}
		writeError(c.Writer, models.CodeMethodNotAllowed, "Method "+method+" is not allowed on "+c.Request.URL.Path+".")
	})

	config := huma.DefaultConfig("holdco", Version)
	// Unknown body fields are ignored (as FastAPI does) rather than refused,
	// and responses carry no $schema links.
	config.AllowAdditionalPropertiesByDefault = true
	config.CreateHooks = nil
	config.Formats = map[string]huma.Format{"application/json": jsonFormat, "json": jsonFormat}
	// /docs is served from the binary (docs.go), not from a CDN.
	config.DocsPath = ""
	config.Info.Description = "REST interface of holdco: found and run AI-operated companies grouped under a conglomerate. " +
		"Errors other than validation failures share one body: {\"error\": <case>, \"detail\": <sentence>, …case fields}. " +
		"Validation failures answer 422 with FastAPI's HTTPValidationError body."
	config.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "Web session JWT, svc_u_v1_ user key or personal access token, svc_c_v1_ company key, or the admin credential."},
	}
	humaAPI := humagin.New(engine, config)
	if d.Service != nil {
		humaAPI.UseMiddleware(authenticate(humaAPI, d.Service.Identity))
	}
	humaAPI.UseMiddleware(checkInputs(humaAPI))
	for prefix, h := range d.Mount {
		engine.Any(prefix+"/*path", gin.WrapH(h))
	}

	documentValidationErrors(humaAPI.OpenAPI())
	r := &Router{Handler: engine, API: humaAPI, serve: headAsGet(engine)}
	if capture := registerRoutes(humaAPI, engine, d); capture != nil {
		r.direct = map[string]http.HandlerFunc{}
		for _, path := range capturePathList {
			r.direct[path] = direct(d.Logger, sink, path, capture)
		}
	}
	registerDocs(engine)
	return r
}

// ServeHTTP serves the REST handler, answering HEAD wherever GET is
// served; POST on a direct route (capture, direct.go) skips gin.
func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost {
		if h := r.direct[req.URL.Path]; h != nil {
			h(w, req)
			return
		}
	}
	r.serve.ServeHTTP(w, req)
}

type headRequestKey struct{}

// headAsGet answers HEAD wherever GET is served (RFC 9110 §9.3.2): the
// request runs as a GET, with the same status and headers; the server
// sends no body for a HEAD request (net/http drops what the handler
// writes).
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		get := r.Clone(context.WithValue(r.Context(), headRequestKey{}, http.MethodHead))
		get.Method = http.MethodGet
		next.ServeHTTP(w, get)
	})
}

// documentValidationErrors documents a 422 HTTPValidationError response on
// every operation that takes parameters or a body, as it is added.
func documentValidationErrors(oapi *huma.OpenAPI) {
	schema := oapi.Components.Schemas.Schema(reflect.TypeFor[HTTPValidationError](), true, "HTTPValidationError")
	oapi.OnAddOperation = append(oapi.OnAddOperation, func(_ *huma.OpenAPI, op *huma.Operation) {
		if len(op.Parameters) == 0 && op.RequestBody == nil {
			return
		}
		if op.Responses == nil {
			op.Responses = map[string]*huma.Response{}
		}
		op.Responses["422"] = &huma.Response{
			Description: "Validation failure",
			Content:     map[string]*huma.MediaType{"application/json": {Schema: schema}},
		}
	})
}
