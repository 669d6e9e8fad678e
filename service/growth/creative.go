package growth

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"unicode"

	"holdco/models"
)

// Placement is where an ad shows, with its preview size (CSS pixels).
type Placement struct {
	Name          string
	Width, Height int
	// Layout is the preview's arrangement: "feed" (image above text),
	// "story" (full height), "column" (small, side by side).
	Layout string
}

// Placements are the preview placements (Meta's ad formats).
var Placements = []Placement{
	{"MOBILE_FEED_STANDARD", 320, 480, "feed"},
	{"DESKTOP_FEED_STANDARD", 500, 520, "feed"},
	{"INSTAGRAM_STANDARD", 320, 440, "feed"},
	{"INSTAGRAM_STORY", 270, 480, "story"},
	{"RIGHT_COLUMN_STANDARD", 254, 133, "column"},
}

// PlacementNames lists the placements' names.
func PlacementNames() []string {
	out := make([]string, len(Placements))
	for i, p := range Placements {
		out[i] = p.Name
	}
	return out
}

func placementByName(name string) (Placement, bool) {
	for _, p := range Placements {
		if p.Name == name {
			return p, true
		}
	}
	return Placement{}, false
}

// Preview is a rendered creative.
type Preview struct {
	Placement       string
	Width, Height   int
	HTML            string
	CreativeVersion int64
}

var headlines = []string{"%s: %s", "Meet %s. %s", "Try %s today", "%s, made for you", "Why people pick %s"}
var actions = []string{"Learn more", "Get started", "Sign up", "Shop now", "Try it free"}

// GenerateCreative writes version v of the company's creative from its
// name and mission (or idea): deterministic, so a regeneration gives the
// next variant, not a random one.
func GenerateCreative(c models.Company, v int64) models.AdCreative {
	about := firstSentence(c.Mission)
	if about == "" {
		about = firstSentence(c.Idea)
	}
	if about == "" {
		about = "Something new is here."
	}
	i := int((v - 1) % int64(len(headlines)))
	h := headlines[i]
	var headline string
	if strings.Count(h, "%s") == 2 {
		headline = fmt.Sprintf(h, c.Name, cut(about, 60))
	} else {
		headline = fmt.Sprintf(h, c.Name)
	}
	return models.AdCreative{Version: v, Headline: cut(headline, 200), Body: cut(about, 300), CallToAction: actions[int((v-1)%int64(len(actions)))]}
}

func firstSentence(s string) string {
	s = strings.TrimSpace(strings.Join(strings.Fields(s), " "))
	if i := strings.IndexAny(s, ".!?"); i >= 0 {
		s = s[:i+1]
	}
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// previewCSP confines the preview document: no scripts, no network, only
// inline styles (it is shown in a sandboxed frame, see docs).
const previewCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

var previewTemplate = template.Must(template.New("ad").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width={{.P.Width}}">
<title>Ad preview</title>
<style>
*{box-sizing:border-box;margin:0}
body{font-family:system-ui,-apple-system,sans-serif;width:{{.P.Width}}px;height:{{.P.Height}}px;overflow:hidden;background:#fff;color:#1c1e21}
.ad{display:flex;flex-direction:{{if eq .P.Layout "column"}}row{{else}}column{{end}};height:100%;border:1px solid #dddfe2}
.art{flex:{{if eq .P.Layout "story"}}1{{else}}0 0 {{if eq .P.Layout "column"}}45%{{else}}52%{{end}}{{end}};background:linear-gradient(135deg,hsl({{.Hue}},70%,55%),hsl({{.Hue2}},70%,40%));color:#fff;display:flex;align-items:center;justify-content:center;padding:8px;font-weight:700;font-size:{{if eq .P.Layout "column"}}14{{else}}22{{end}}px;text-align:center}
.copy{padding:8px 10px;display:flex;flex-direction:column;gap:6px;flex:1;min-width:0}
.sponsor{font-size:11px;color:#65676b}
h1{font-size:{{if eq .P.Layout "column"}}12{{else}}16{{end}}px;line-height:1.25}
p{font-size:{{if eq .P.Layout "column"}}11{{else}}13{{end}}px;line-height:1.35;color:#444;overflow:hidden}
.cta{align-self:flex-start;background:#e4e6eb;border-radius:6px;padding:6px 12px;font-size:12px;font-weight:600}
</style></head>
<body><div class="ad" data-placement="{{.P.Name}}">
<div class="art">{{.Company}}</div>
<div class="copy"><span class="sponsor">{{.Company}} · Sponsored</span><h1>{{.C.Headline}}</h1>{{if ne .P.Layout "column"}}<p>{{.C.Body}}</p>{{end}}<span class="cta">{{.C.CallToAction}}</span></div>
</div></body></html>
`))

// renderPreview renders the creative for a placement: every text is the
// tenant's and is escaped by html/template; the document loads nothing.
func renderPreview(p Placement, company string, c models.AdCreative) (string, error) {
	if strings.TrimSpace(c.Headline) == "" || strings.TrimSpace(c.CallToAction) == "" {
		return "", fmt.Errorf("the creative has no headline or call to action")
	}
	hue := int(c.Version*47+int64(len(company))*13) % 360
	var b bytes.Buffer
	err := previewTemplate.Execute(&b, map[string]any{"P": p, "C": c, "Company": company, "Hue": hue, "Hue2": (hue + 40) % 360,
		"CSP": previewCSP})
	return b.String(), err
}
