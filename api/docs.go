package api

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"holdco/models"
)

// ElementsVersion is the pinned version of @stoplight/elements whose built
// files (web-components.min.js and styles.min.css, gzipped, with the
// package's LICENSE) are vendored in docsassets/ and embedded in the
// binary: /docs works offline and loads nothing from a CDN. To update,
// `npm pack @stoplight/elements@<version>`, gzip -9 -n the two files into
// docsassets/ and change the version and hashes here.
const ElementsVersion = "9.0.15"

//go:embed docsassets/*.gz
var docsAssets embed.FS

// docsAssetTypes are the embedded files and their types.
var docsAssetTypes = map[string]string{
	"web-components.min.js": "text/javascript; charset=utf-8",
	"styles.min.css":        "text/css; charset=utf-8",
}

const docsAssetsPath = "/docs/assets/elements-" + ElementsVersion + "/"

// docsPage renders the OpenAPI document with the embedded Elements. The
// CSP allows scripts and styles from this origin only.
var docsPage = []byte(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="referrer" content="no-referrer">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>holdco Reference</title>
    <link rel="stylesheet" href="` + docsAssetsPath + `styles.min.css">
    <script src="` + docsAssetsPath + `web-components.min.js"></script>
  </head>
  <body style="height: 100vh;">
    <elements-api apiDescriptionUrl="/openapi.yaml" router="hash" layout="sidebar" tryItCredentialsPolicy="same-origin"></elements-api>
  </body>
</html>
`)

const docsCSP = "default-src 'none'; base-uri 'none'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; " +
	"img-src 'self' data:; font-src 'self' data:; script-src 'self'; style-src 'self' 'unsafe-inline'"

// registerDocs serves /docs and its assets from the binary.
func registerDocs(engine *gin.Engine) {
	engine.GET("/docs", func(c *gin.Context) {
		c.Header("Content-Security-Policy", docsCSP)
		c.Header("X-Frame-Options", "DENY")
		c.Header("X-Content-Type-Options", "nosniff")
		c.Header("Referrer-Policy", "same-origin")
		c.Header("Cache-Control", "no-cache")
		c.Data(http.StatusOK, "text/html; charset=utf-8", docsPage)
	})
	engine.GET(docsAssetsPath+":file", func(c *gin.Context) {
		name := c.Param("file")
		ctype, ok := docsAssetTypes[name]
		if !ok {
			writeError(c.Writer, models.CodeNotFound, "No documentation asset "+name+".")
			return
		}
		gz, err := docsAssets.ReadFile("docsassets/" + name + ".gz")
		if err != nil {
			writeError(c.Writer, models.CodeNotFound, "No documentation asset "+name+".")
			return
		}
		h := c.Writer.Header()
		h.Set("Content-Type", ctype)
		h.Set("Cache-Control", "public, max-age=31536000, immutable") // the path names the version
		h.Set("X-Content-Type-Options", "nosniff")
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(c.GetHeader("Accept-Encoding")) {
			h.Set("Content-Encoding", "gzip")
			c.Data(http.StatusOK, ctype, gz)
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			_ = c.Error(err)
			c.Status(http.StatusInternalServerError)
			return
		}
		c.Status(http.StatusOK)
		_, _ = io.Copy(c.Writer, zr)
	})
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip (a
// q of 0 refuses it).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.TrimSpace(coding)
		if !strings.EqualFold(coding, "gzip") && coding != "*" {
			continue
		}
		q := 1.0
		if v, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		return q > 0
	}
	return false
}
