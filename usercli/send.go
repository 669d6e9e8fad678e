package usercli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// ExitError carries the exit code a command asks for.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Exit codes of send.
const (
	exitFailed      = 1
	exitInterrupted = 130
)

type turnView struct {
	TurnID      string  `json:"turn_id"`
	SessionID   string  `json:"session_id"`
	Status      string  `json:"status"`
	Text        string  `json:"text"`
	Answer      *string `json:"answer"`
	Question    *string `json:"question"`
	CreditsCost *int64  `json:"credits_cost"`
	Error       *struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
	} `json:"error"`
}

// Send sends a message to a company's agent and streams the turn's text
// until it ends: `holdco send <business> "message" [--file id]... [--session id]`.
// <business> is a company id or handle of the signed-in account. Ctrl-C
// (ctx cancelled) interrupts the turn and exits 130; a failed turn exits 1.
func Send(ctx context.Context, e Env, args []string) error {
	fs := flag.NewFlagSet("send", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	api := fs.String("api", "", "holdco REST address")
	session := fs.String("session", "", "continue this conversation (a session id)")
	var files multiFlag
	fs.Var(&files, "file", "attach a file of the company by its id (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(e.Stderr, `usage: holdco send [--file <file-id>]... [--session <id>] <business> "message"`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errors.New("send needs a business (id or handle) and a message")
	}
	c, base, err := e.signedIn(*api)
	if err != nil {
		return err
	}
	companyID, err := e.resolveBusiness(ctx, base, c.AccessToken, fs.Arg(0))
	if err != nil {
		return err
	}
	body := map[string]any{"message": fs.Arg(1)}
	if len(files) > 0 {
		body["attachments"] = []string(files)
	}
	if *session != "" {
		body["session_id"] = *session
	}
	var started turnView
	status, raw, err := e.rawCall(ctx, http.MethodPost, base+"/companies/"+url.PathEscape(companyID)+"/messages", c.AccessToken, body)
	if err != nil {
		return err
	}
	if status/100 != 2 {
		return refusal(status, raw)
	}
	if err := json.Unmarshal(raw, &started); err != nil {
		return fmt.Errorf("unexpected answer from holdco: %w", err)
	}
	return e.follow(ctx, base, c.AccessToken, started.TurnID)
}

// follow polls the turn and prints its text as it grows until it ends.
func (e Env) follow(ctx context.Context, base, bearer, turnID string) error {
	printed, wait := "", 500*time.Millisecond
	for {
		var t turnView
		// The poll itself is not cancelled by Ctrl-C: the interrupt below
		// decides what happens.
		if _, err := e.call(context.WithoutCancel(ctx), http.MethodGet, base+"/turns/"+turnID, bearer, nil, &t); err != nil {
			return err
		}
		if strings.HasPrefix(t.Text, printed) && len(t.Text) > len(printed) {
			fmt.Fprint(e.Stdout, t.Text[len(printed):])
			printed, wait = t.Text, 500*time.Millisecond
		} else {
			wait = min(wait*2, 2*time.Second)
		}
		switch t.Status {
		case "queued", "running":
		default:
			return e.ended(t, printed)
		}
		if err := e.Sleep(ctx, wait); err != nil {
			return e.interrupt(base, bearer, turnID)
		}
	}
}

// ended prints how the turn ended and picks the exit code.
func (e Env) ended(t turnView, printed string) error {
	if printed != "" {
		fmt.Fprintln(e.Stdout)
	}
	if t.Answer != nil && !strings.HasSuffix(strings.TrimSpace(printed), strings.TrimSpace(*t.Answer)) {
		fmt.Fprintln(e.Stdout, *t.Answer)
	}
	cost := "not reported"
	if t.CreditsCost != nil {
		cost = fmt.Sprintf("%d credits", *t.CreditsCost)
	}
	switch t.Status {
	case "completed":
		fmt.Fprintf(e.Stderr, "Turn %s completed (%s).\n", t.TurnID, cost)
		return nil
	case "waiting":
		if t.Question != nil {
			fmt.Fprintf(e.Stdout, "Question: %s\n", *t.Question)
		}
		fmt.Fprintf(e.Stderr, "The agent waits for your answer: reply with another holdco send (same session %s). (%s)\n", t.SessionID, cost)
		return nil
	case "interrupted":
		fmt.Fprintf(e.Stderr, "Turn %s was interrupted (%s).\n", t.TurnID, cost)
		return &ExitError{Code: exitInterrupted, Err: errors.New("the turn was interrupted")}
	}
	detail := "the turn failed"
	if t.Error != nil {
		detail = t.Error.Detail + " (" + t.Error.Error + ")"
	}
	fmt.Fprintf(e.Stderr, "Turn %s failed: %s (%s).\n", t.TurnID, detail, cost)
	return &ExitError{Code: exitFailed, Err: errors.New(detail)}
}

// interrupt asks the server to stop the turn once (Ctrl-C).
func (e Env) interrupt(base, bearer, turnID string) error {
	fmt.Fprintln(e.Stderr, "\nInterrupting the turn…")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	var t turnView
	if _, err := e.call(ctx, http.MethodPost, base+"/turns/"+turnID+"/interrupt", bearer, nil, &t); err != nil {
		return &ExitError{Code: exitInterrupted, Err: fmt.Errorf("the turn may still run; interrupting it failed: %w", err)}
	}
	fmt.Fprintf(e.Stderr, "Turn %s is %s.\n", turnID, t.Status)
	return &ExitError{Code: exitInterrupted, Err: errors.New("interrupted")}
}

// resolveBusiness turns an id or a handle into a company id of the
// signed-in account.
func (e Env) resolveBusiness(ctx context.Context, base, bearer, business string) (string, error) {
	if id, err := uuid.Parse(business); err == nil {
		return id.String(), nil
	}
	var me struct {
		ConglomerateID string `json:"conglomerate_id"`
	}
	if _, err := e.call(ctx, http.MethodGet, base+"/auth/me", bearer, nil, &me); err != nil {
		return "", err
	}
	var list struct {
		Companies []struct {
			ID     string `json:"id"`
			Handle string `json:"handle"`
		} `json:"companies"`
	}
	if _, err := e.call(ctx, http.MethodGet, base+"/conglomerates/"+url.PathEscape(me.ConglomerateID)+"/companies", bearer, nil, &list); err != nil {
		return "", err
	}
	for _, c := range list.Companies {
		if strings.EqualFold(c.Handle, strings.TrimPrefix(business, "@")) {
			return c.ID, nil
		}
	}
	return "", fmt.Errorf("no business %q in your account (give its id or handle)", business)
}

// rawCall is call that hands back the status and body of any answer.
func (e Env) rawCall(ctx context.Context, method, u, bearer string, in any) (int, []byte, error) {
	b, _ := json.Marshal(in)
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := e.HTTP.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("cannot reach holdco: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, nil
}

// refusal explains a refused message: the running turn of a conflict, the
// numbers and link of insufficient credits, else the server's sentence.
func refusal(status int, raw []byte) error {
	var body struct {
		Error   string             `json:"error"`
		Detail  string             `json:"detail"`
		TurnID  string             `json:"turn_id"`
		Balance *float64           `json:"balance"`
		Needed  *float64           `json:"needed"`
		Links   map[string]*string `json:"links"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Error == "" {
		return apiError(status, raw)
	}
	msg := body.Detail
	switch body.Error {
	case "conflict":
		if body.TurnID != "" {
			msg += fmt.Sprintf("\nRunning turn: %s (stop it with POST /turns/%s/interrupt, or wait).", body.TurnID, body.TurnID)
		}
	case "insufficient_credits":
		if body.Balance != nil && body.Needed != nil {
			msg += fmt.Sprintf("\nBalance %.0f, needed %.0f.", *body.Balance, *body.Needed)
		}
		if l := body.Links["top_up"]; l != nil {
			msg += "\nTop up: " + *l
		}
	}
	return &ExitError{Code: exitFailed, Err: errors.New(msg)}
}

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// reorder puts flags before the positional arguments, so
// `holdco send shop "hi" --file x` works as well as the flag-first form.
func reorder(args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			if !strings.Contains(a, "=") && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		rest = append(rest, a)
	}
	return append(flags, rest...)
}
