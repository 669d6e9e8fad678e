package api

import (
	"github.com/gin-gonic/gin"

	"holdco/observability"
)

// recordRoute tells the listener's metrics and span which route template
// answers (gin's, such as /companies/:company_id); an unmatched request
// records none.
func recordRoute() gin.HandlerFunc {
	return func(c *gin.Context) {
		observability.SetRoute(c.Writer, c.FullPath())
		c.Next()
	}
}
