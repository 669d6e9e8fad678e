package agenttools

import (
	"context"
	"time"

	"holdco/models"
	"holdco/service/prospects"
)

// Prospects (the company's leads).

type ListProspectsInput struct {
	Statuses []string `json:"statuses,omitempty" jsonschema:"keep prospects in any of these statuses; none keeps all" enum:"new,contacted,replied,qualified,won,lost"`
	Limit    int      `json:"limit,omitempty" jsonschema:"at most this many, newest first (default 50)" minimum:"1" maximum:"200"`
	Before   string   `json:"before,omitempty" jsonschema:"the next value of the previous page" maxLength:"36"`
}

type Prospect struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Email        string    `json:"email"`
	Organization string    `json:"organization"`
	Status       string    `json:"status"`
	Notes        string    `json:"notes"`
	Source       string    `json:"source"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

type ProspectList struct {
	Prospects []Prospect `json:"prospects"`
	Next      string     `json:"next,omitempty"`
}

type AddProspectInput struct {
	Name         string `json:"name" jsonschema:"the person's or the lead's name" maxLength:"200"`
	Email        string `json:"email,omitempty" jsonschema:"their email address (one prospect per address)" maxLength:"320"`
	Organization string `json:"organization,omitempty" jsonschema:"their company or organisation" maxLength:"200"`
	Status       string `json:"status,omitempty" jsonschema:"where they stand; default new" enum:"new,contacted,replied,qualified,won,lost"`
	Notes        string `json:"notes,omitempty" jsonschema:"what is known and what was said, Markdown" maxLength:"10000"`
	Source       string `json:"source,omitempty" jsonschema:"where the lead came from (a URL or a few words)" maxLength:"500"`
}

type UpdateProspectInput struct {
	ProspectID   string  `json:"prospect_id" jsonschema:"the prospect's id" maxLength:"36"`
	Name         *string `json:"name,omitempty" maxLength:"200"`
	Email        *string `json:"email,omitempty" maxLength:"320"`
	Organization *string `json:"organization,omitempty" maxLength:"200"`
	Status       *string `json:"status,omitempty" enum:"new,contacted,replied,qualified,won,lost"`
	Notes        *string `json:"notes,omitempty" jsonschema:"replaces the notes" maxLength:"10000"`
	Source       *string `json:"source,omitempty" maxLength:"500"`
}

func prospectOf(p models.Prospect) Prospect {
	return Prospect{ID: p.ID, Name: p.Name, Email: p.Email, Organization: p.Organization, Status: string(p.Status),
		Notes: p.Notes, Source: p.Source, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func registerProspects(c *Catalog, s *prospects.Service) {
	Register(c, "list_prospects", "List the company's prospects (leads), newest first.",
		func(ctx context.Context, companyID string, in ListProspectsInput) (ProspectList, error) {
			st := make([]models.ProspectStatus, len(in.Statuses))
			for i, x := range in.Statuses {
				st[i] = models.ProspectStatus(x)
			}
			p, err := s.List(ctx, companyID, prospects.ListInput{Statuses: st, Limit: in.Limit, Before: in.Before})
			if err != nil {
				return ProspectList{}, err
			}
			out := ProspectList{Prospects: make([]Prospect, len(p.Prospects)), Next: p.Next}
			for i, x := range p.Prospects {
				out.Prospects[i] = prospectOf(x)
			}
			return out, nil
		})
	Register(c, "add_prospect", "Add a prospect (a lead the company may sell to).",
		func(ctx context.Context, companyID string, in AddProspectInput) (Prospect, error) {
			add := prospects.Input{Name: &in.Name, Email: optional(in.Email), Organization: optional(in.Organization),
				Notes: optional(in.Notes), Source: optional(in.Source)}
			if in.Status != "" {
				st := models.ProspectStatus(in.Status)
				add.Status = &st
			}
			p, err := s.Add(ctx, companyID, add)
			return prospectOf(p), err
		})
	Register(c, "update_prospect", "Change a prospect: its status in the pipeline, notes or details; fields left out stay.",
		func(ctx context.Context, companyID string, in UpdateProspectInput) (Prospect, error) {
			up := prospects.Input{Name: in.Name, Email: in.Email, Organization: in.Organization, Notes: in.Notes, Source: in.Source}
			if in.Status != nil {
				st := models.ProspectStatus(*in.Status)
				up.Status = &st
			}
			p, err := s.Update(ctx, companyID, in.ProspectID, up)
			return prospectOf(p), err
		})
}
