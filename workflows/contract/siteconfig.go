package contract

// Names of the site configuration workflow and its messages.
const (
	SiteConfigWorkflowName = "SiteConfig"
	// SignalSiteConfigChanged asks for the site's environment to be written
	// again (sent with signal-with-start after a key is minted or rotated).
	SignalSiteConfigChanged = "changed"
)

// SiteConfigWorkflowID is the one configuration workflow per company, so
// changes are written one after the other, never concurrently.
func SiteConfigWorkflowID(companyID string) string { return "site-config:" + companyID }

// SiteConfigInput names the company whose site is configured. It carries
// no secret: the key is read when the activity runs, so workflow histories
// never hold it and a later run always writes the current key.
type SiteConfigInput struct {
	CompanyID string
}
