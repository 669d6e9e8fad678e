package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"holdco/app"
	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
	"holdco/service/tasks"
	"holdco/service/traces"
)

// operatorCommand runs the admin commands that are the admin endpoints'
// use cases (health, heal, user-auth enable, tasks, runs … trace) as the
// operator, printing text or, with --json, the endpoint's body.
func operatorCommand(ctx context.Context, cmd string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("admin "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the admin endpoint's JSON body")
	statuses := fs.String("status", "", "tasks: keep these statuses (comma-separated)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	usage := func(form string) error {
		fmt.Fprint(stderr, adminUsage)
		return fmt.Errorf("admin %s: usage: holdco admin %s", cmd, form)
	}
	// Checked before anything is opened: a typo costs no connection.
	switch {
	case cmd == "health" && len(pos) > 1:
		return usage("health [COMPANY_ID] [--json]")
	case cmd == "heal" && len(pos) != 1:
		return usage("heal COMPANY_ID [--json]")
	case cmd == "user-auth" && (len(pos) != 2 || pos[0] != "enable"):
		return usage("user-auth enable COMPANY_ID [--json]")
	case cmd == "tasks" && len(pos) != 1:
		return usage("tasks COMPANY_ID [--status S,…] [--json]")
	case cmd == "runs" && (len(pos) != 2 || pos[1] != "trace"):
		return usage("runs RUN_ID trace [--json]")
	}
	cfg, logger, err := load(getenv, stderr)
	if err != nil {
		return err
	}
	op, err := app.OpenOperator(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer op.Close()
	ctx = service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialAdminToken, CredentialID: "holdco-admin-cli"})
	svc := op.Service
	out := output{w: stdout, json: *asJSON}
	fail := func(err error) error { return fmt.Errorf("admin %s: %w", cmd, err) }

	switch cmd {
	case "health":
		if op.Temporal == nil {
			fmt.Fprintf(stderr, "holdco: %v; resources are checked from their rows only\n", op.TemporalErr)
		}
		if len(pos) == 1 {
			d, err := svc.Companies.DiagnoseCompany(ctx, pos[0])
			if err != nil {
				return fail(err)
			}
			return out.print(healthView(d), func(w io.Writer) { printHealth(w, []companies.CompanyDiagnosis{d}) })
		}
		ds, err := svc.Companies.DiagnoseCompanies(ctx)
		if err != nil {
			return fail(err)
		}
		body := healthListView{CheckedAt: time.Now().UTC(), Companies: []companyHealthView{}}
		for _, d := range ds {
			body.Companies = append(body.Companies, healthView(d))
			if d.Healthy {
				body.Healthy++
			} else {
				body.Unhealthy++
			}
		}
		return out.print(body, func(w io.Writer) {
			printHealth(w, ds)
			fmt.Fprintf(w, "%d companies: %d healthy, %d unhealthy\n", len(ds), body.Healthy, body.Unhealthy)
		})
	case "heal":
		r, err := svc.Companies.HealCompany(ctx, pos[0])
		if err != nil {
			return fail(err)
		}
		return out.print(healView{companyHealthView: healthView(r.CompanyDiagnosis), HealRequested: r.HealRequested, WorkflowID: r.WorkflowID}, func(w io.Writer) {
			printHealth(w, []companies.CompanyDiagnosis{r.CompanyDiagnosis})
			if r.HealRequested {
				fmt.Fprintf(w, "heal requested: workflow %s re-provisions what is failed or missing\n", r.WorkflowID)
			} else {
				fmt.Fprintln(w, "healthy: nothing to heal")
			}
		})
	case "user-auth":
		c, err := svc.Companies.EnableUserAuth(ctx, pos[1])
		if err != nil {
			return fail(err)
		}
		return out.print(userAuthView{CompanyID: c.CompanyID, ClientID: c.ClientID, Enabled: c.RevokedAt == nil}, func(w io.Writer) {
			fmt.Fprintf(w, "app sign-in enabled for company %s\n", c.CompanyID)
		})
	case "tasks":
		var in tasks.ListInput
		for _, st := range strings.Split(*statuses, ",") {
			if st = strings.TrimSpace(st); st != "" {
				in.Statuses = append(in.Statuses, models.TaskStatus(st))
			}
		}
		l, err := svc.Tasks.AdminList(ctx, pos[0], in)
		if err != nil {
			return fail(err)
		}
		body := taskListView{Tasks: []taskView{}, Total: l.Total}
		for _, t := range l.Tasks {
			body.Tasks = append(body.Tasks, toTaskView(t))
		}
		return out.print(body, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tPRIORITY\tCREATED BY\tTITLE")
			for _, t := range l.Tasks {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Status, t.Priority, t.CreatedBy, t.Title)
			}
			_ = tw.Flush()
			fmt.Fprintf(w, "%d of %d tasks\n", len(l.Tasks), l.Total)
		})
	case "runs":
		return printTrace(ctx, svc.Traces, pos[0], out)
	}
	return nil
}

// parseInterleaved parses flags wherever they stand among the positional
// arguments (holdco admin health ID --json) and returns the positional
// ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// output prints a command's answer as text or as JSON.
type output struct {
	w    io.Writer
	json bool
}

func (o output) print(body any, text func(io.Writer)) error {
	if !o.json {
		text(o.w)
		return nil
	}
	enc := json.NewEncoder(o.w)
	enc.SetIndent("", "  ")
	return enc.Encode(body)
}

// The JSON bodies have the admin endpoints' field names.
type resourceHealthView struct {
	Kind      string `json:"kind"`
	Status    string `json:"status"`
	Ref       string `json:"ref,omitempty"`
	LastError string `json:"last_error,omitempty"`
	Attempts  int    `json:"attempts"`
	Healthy   bool   `json:"healthy"`
	Problem   string `json:"problem,omitempty"`
}

type companyHealthView struct {
	CompanyID      string               `json:"company_id"`
	ConglomerateID string               `json:"conglomerate_id"`
	Handle         string               `json:"handle"`
	Healthy        bool                 `json:"healthy"`
	Resources      []resourceHealthView `json:"resources"`
}

type healthListView struct {
	CheckedAt time.Time           `json:"checked_at"`
	Healthy   int                 `json:"healthy"`
	Unhealthy int                 `json:"unhealthy"`
	Companies []companyHealthView `json:"companies"`
}

type healView struct {
	companyHealthView
	HealRequested bool   `json:"heal_requested"`
	WorkflowID    string `json:"workflow_id"`
}

type userAuthView struct {
	CompanyID string `json:"company_id"`
	ClientID  string `json:"client_id,omitempty"`
	Enabled   bool   `json:"enabled"`
}

type taskView struct {
	ID            string     `json:"id"`
	CompanyID     string     `json:"company_id"`
	Title         string     `json:"title"`
	Description   string     `json:"description"`
	Status        string     `json:"status"`
	Priority      string     `json:"priority"`
	CreatedBy     string     `json:"created_by"`
	DueAt         *time.Time `json:"due_at"`
	LastRunID     *string    `json:"last_run_id"`
	FailureReason *string    `json:"failure_reason"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

type taskListView struct {
	Tasks []taskView `json:"tasks"`
	Total int64      `json:"total"`
}

func toTaskView(t models.Task) taskView {
	v := taskView{ID: t.ID, CompanyID: t.CompanyID, Title: t.Title, Description: t.Description, Status: string(t.Status),
		Priority: string(t.Priority), CreatedBy: string(t.CreatedBy), DueAt: t.DueAt, LastRunID: t.LastRunID,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if t.FailureReason != "" {
		v.FailureReason = &t.FailureReason
	}
	return v
}

func healthView(d companies.CompanyDiagnosis) companyHealthView {
	v := companyHealthView{CompanyID: d.CompanyID, ConglomerateID: d.ConglomerateID, Handle: d.Handle, Healthy: d.Healthy, Resources: []resourceHealthView{}}
	for _, r := range d.Resources {
		v.Resources = append(v.Resources, resourceHealthView{Kind: string(r.Kind), Status: string(r.Status), Ref: r.Ref, LastError: r.LastError,
			Attempts: r.Attempts, Healthy: r.Healthy, Problem: r.Problem})
	}
	return v
}

func printHealth(w io.Writer, ds []companies.CompanyDiagnosis) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, d := range ds {
		state := "healthy"
		if !d.Healthy {
			state = "UNHEALTHY"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", d.Handle, d.CompanyID, state)
		for _, r := range d.Resources {
			if !r.Healthy {
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.Kind, r.Status, r.Problem)
			}
		}
	}
	_ = tw.Flush()
}

// traceView is a run's trace with --json: its files and its events.
type traceView struct {
	RunID  string            `json:"run_id"`
	File   string            `json:"file"`
	Files  []traceFileView   `json:"files"`
	Events []json.RawMessage `json:"events"`
}

type traceFileView struct {
	Name      string    `json:"name"`
	SizeBytes int64     `json:"size_bytes"`
	UpdatedAt time.Time `json:"updated_at"`
}

// printTrace copies the run's trace (JSON Lines) to the output, or with
// --json prints its files and events as one document.
func printTrace(ctx context.Context, svc *traces.Service, runID string, out output) error {
	tr, err := svc.OpenTrace(ctx, runID)
	if err != nil {
		return fmt.Errorf("admin runs %s trace: %w", runID, err)
	}
	defer tr.Body.Close()
	if !out.json {
		_, err := io.Copy(out.w, tr.Body)
		return err
	}
	files, err := svc.ListFiles(ctx, runID)
	if err != nil {
		return fmt.Errorf("admin runs %s trace: %w", runID, err)
	}
	body := traceView{RunID: runID, File: tr.Name, Files: []traceFileView{}, Events: []json.RawMessage{}}
	for _, f := range files {
		body.Files = append(body.Files, traceFileView{Name: f.Name, SizeBytes: f.SizeBytes, UpdatedAt: f.UpdatedAt})
	}
	dec := json.NewDecoder(tr.Body)
	for {
		var ev json.RawMessage
		if err := dec.Decode(&ev); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("admin runs %s trace: a line is not JSON: %w", runID, err)
		}
		body.Events = append(body.Events, ev)
	}
	return out.print(body, nil)
}
