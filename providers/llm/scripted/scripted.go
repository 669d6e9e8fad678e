// Package scripted is the embedded default language model: deterministic,
// offline, and it really calls tools, so turns, questions, interrupts and
// credit spending run end to end without a provider.
//
// # The script
//
// Each Complete looks at the conversation and takes the first step that
// applies. "The message" is the text of the last user message that holds
// text (tool results are not messages of the user); "this turn" is
// everything after it.
//
//  1. The last message holds the user's text (nothing done this turn yet):
//     a. if the message asks the agent a question (its trimmed text ends
//     with "?") or contains "ask me" (any case), and the tool ask_question
//     is offered: call ask_question with
//     {"question": "Before I start: what matters most to you about \"<subject>\"?"}
//     b. otherwise, if write_document is offered: call write_document with
//     {"document_type": "notes", "title": "Notes: <subject>",
//     "content": "# Notes: <subject>\n\nWhat was asked:\n\n<message>\n"}
//     c. otherwise go on as in 2.
//  2. The last message holds tool results: the next tool of the plan not
//     called this turn and offered is called — the plan is write_document
//     (as in 1b), then create_task with
//     {"title": "Follow up: <subject>", "description": "Follow up on: <message>"}.
//  3. Nothing left to call: the final answer, a text naming what was done
//     this turn ("I wrote the document \"…\". I created the task \"…\".",
//     "I asked: …", and "The tool X failed: …" for a result marked as an
//     error), or, when no tool was called, "I read your message: <subject>.".
//
// A message starting with "First pass:" (a connector business's first
// turn) makes step 1b write the document founding_plan instead of notes.
// A request that offers propose_company is the founding interview instead
// (interview.go, docs/llm.md).
//
// <subject> is the message's first line cut to 60 characters. Tool-calling
// answers start with one short sentence of text ("I'll write down notes
// first." / "Next, I'll create a task." / "I need an answer from you.") and
// end with StopReason tool_use; the final answer ends with end_turn. Tool
// use ids are "call_<n>", n counting the tool_use blocks of the whole
// conversation from 1. Text reaches onText in chunks of at most 4 words.
//
// Each Complete waits StepDelay in total, spread over its chunks, and
// returns at once with a canceled (or timeout) ModelCallError when ctx ends.
// Usage is derived from lengths: input tokens are the characters of the
// system prompt, messages and tool specs divided by 4 (rounded up), output
// tokens the characters of the answer's text and tool inputs divided by 4
// (rounded up), each at least 1. The same request always gets the same
// answer.
package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"holdco/models"
	"holdco/providers/llm"
)

// Tool names and inputs of the script; the agent's tool catalog uses the
// same names and shapes.
const (
	ToolAskQuestion   = "ask_question"
	ToolWriteDocument = "write_document"
	ToolCreateTask    = "create_task"
)

// AskQuestionInput is ask_question's input.
type AskQuestionInput struct {
	Question string `json:"question"`
}

// WriteDocumentInput is write_document's input.
type WriteDocumentInput struct {
	DocumentType string `json:"document_type"`
	Title        string `json:"title"`
	Content      string `json:"content"`
}

// CreateTaskInput is create_task's input.
type CreateTaskInput struct {
	Title       string `json:"title"`
	Description string `json:"description"`
}

// ModelName is reported in responses unless the request names a model.
const ModelName = "scripted"

const (
	subjectLen    = 60
	wordsPerChunk = 4
)

// Model is the scripted model.
type Model struct {
	// StepDelay is how long each Complete takes (0: immediate).
	StepDelay time.Duration
}

// New returns a scripted model taking stepDelay per call.
func New(stepDelay time.Duration) *Model { return &Model{StepDelay: stepDelay} }

// Complete answers req by the script in the package documentation.
func (m *Model) Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return models.ModelResponse{}, llm.TransportError(ctx, err)
	}
	resp := m.answer(req)
	text := resp.Text()
	chunks := chunk(text)
	pause := time.Duration(0)
	if len(chunks) > 0 {
		pause = m.StepDelay / time.Duration(len(chunks))
	} else if m.StepDelay > 0 {
		chunks, pause = []string{""}, m.StepDelay
	}
	for _, c := range chunks {
		if err := wait(ctx, pause); err != nil {
			return models.ModelResponse{}, err
		}
		if c != "" && onText != nil {
			onText(c)
		}
	}
	return resp, nil
}

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		if err := ctx.Err(); err != nil {
			return llm.TransportError(ctx, err)
		}
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return llm.TransportError(ctx, ctx.Err())
	case <-t.C:
		return nil
	}
}

// turn is what the script reads from the conversation.
type turn struct {
	message    string                         // the user's last text
	lastIsText bool                           // the last message is the user's text
	called     map[string]models.ContentBlock // tool calls of this turn by name
	results    map[string]models.ContentBlock // their results by tool use id
	order      []string                       // tool names in call order
	toolUses   int                            // tool_use blocks in the whole conversation
	offered    map[string]bool
	inputChars int
}

func read(req models.ModelRequest) turn {
	t := turn{called: map[string]models.ContentBlock{}, results: map[string]models.ContentBlock{}, offered: map[string]bool{}}
	t.inputChars = len(req.System)
	for _, tool := range req.Tools {
		t.offered[tool.Name] = true
		t.inputChars += len(tool.Name) + len(tool.Description) + len(tool.InputSchema)
	}
	start := -1
	for i, msg := range req.Messages {
		for _, b := range msg.Content {
			t.inputChars += len(b.Text) + len(b.Input) + len(b.ToolName) + len(b.ToolUseID)
			if b.Type == models.ContentToolUse {
				t.toolUses++
			}
		}
		if msg.Role == models.RoleUser && hasText(msg) {
			start = i
		}
	}
	if start < 0 {
		return t
	}
	t.message = textOf(req.Messages[start])
	t.lastIsText = start == len(req.Messages)-1
	for _, msg := range req.Messages[start+1:] {
		for _, b := range msg.Content {
			switch b.Type {
			case models.ContentToolUse:
				if _, seen := t.called[b.ToolName]; !seen {
					t.order = append(t.order, b.ToolName)
				}
				t.called[b.ToolName] = b
			case models.ContentToolResult:
				t.results[b.ToolUseID] = b
			}
		}
	}
	return t
}

func (m *Model) answer(req models.ModelRequest) models.ModelResponse {
	t := read(req)
	subject := subjectOf(t.message)
	call := func(preface, name string, input any) models.ModelResponse {
		raw, _ := json.Marshal(input)
		return models.ModelResponse{
			Content: []models.ContentBlock{
				{Type: models.ContentText, Text: preface},
				{Type: models.ContentToolUse, ToolUseID: fmt.Sprintf("call_%d", t.toolUses+1), ToolName: name, Input: raw},
			},
			StopReason: models.StopToolUse,
		}
	}
	var resp models.ModelResponse
	switch {
	case t.offered[models.ToolProposeCompany]:
		resp = interview(req)
	case t.lastIsText && asksAQuestion(t.message) && t.offered[ToolAskQuestion]:
		resp = call("I need an answer from you.", ToolAskQuestion, AskQuestionInput{
			Question: fmt.Sprintf("Before I start: what matters most to you about %q?", subject),
		})
	case t.message != "" && t.offered[ToolWriteDocument] && !t.done(ToolWriteDocument) && !t.done(ToolAskQuestion) && isFirstPass(t.message):
		resp = call("I'll write the founding plan first.", ToolWriteDocument, WriteDocumentInput{
			DocumentType: "founding_plan",
			Title:        "Founding plan",
			Content:      "# Founding plan\n\nWhat was asked:\n\n" + t.message + "\n",
		})
	case t.message != "" && t.offered[ToolWriteDocument] && !t.done(ToolWriteDocument) && !t.done(ToolAskQuestion):
		resp = call("I'll write down notes first.", ToolWriteDocument, WriteDocumentInput{
			DocumentType: "notes",
			Title:        "Notes: " + subject,
			Content:      "# Notes: " + subject + "\n\nWhat was asked:\n\n" + t.message + "\n",
		})
	case t.message != "" && t.offered[ToolCreateTask] && !t.done(ToolCreateTask) && !t.done(ToolAskQuestion):
		resp = call("Next, I'll create a task.", ToolCreateTask, CreateTaskInput{
			Title:       "Follow up: " + subject,
			Description: "Follow up on: " + t.message,
		})
	default:
		resp = models.ModelResponse{
			Content:    []models.ContentBlock{{Type: models.ContentText, Text: t.summary(subject)}},
			StopReason: models.StopEndTurn,
		}
	}
	resp.Model = ModelName
	if req.Model != "" {
		resp.Model = req.Model
	}
	out := 0
	for _, b := range resp.Content {
		out += len(b.Text) + len(b.Input)
	}
	resp.Usage = models.ModelUsage{InputTokens: tokens(t.inputChars), OutputTokens: tokens(out)}
	return resp
}

func (t turn) done(tool string) bool { _, ok := t.called[tool]; return ok }

// summary is the final answer: what this turn did, in call order.
func (t turn) summary(subject string) string {
	if len(t.order) == 0 {
		if t.message == "" {
			return "There is no message to answer."
		}
		return fmt.Sprintf("I read your message: %s.", subject)
	}
	var parts []string
	for _, name := range t.order {
		callBlock := t.called[name]
		if result, ok := t.results[callBlock.ToolUseID]; ok && result.IsError {
			parts = append(parts, fmt.Sprintf("The tool %s failed: %s.", name, strings.TrimSuffix(subjectOf(result.Text), ".")))
			continue
		}
		switch name {
		case ToolWriteDocument:
			var in WriteDocumentInput
			_ = json.Unmarshal(callBlock.Input, &in)
			parts = append(parts, fmt.Sprintf("I wrote the document %q.", in.Title))
		case ToolCreateTask:
			var in CreateTaskInput
			_ = json.Unmarshal(callBlock.Input, &in)
			parts = append(parts, fmt.Sprintf("I created the task %q.", in.Title))
		case ToolAskQuestion:
			var in AskQuestionInput
			_ = json.Unmarshal(callBlock.Input, &in)
			parts = append(parts, "I asked: "+in.Question)
		default:
			parts = append(parts, fmt.Sprintf("I called %s.", name))
		}
	}
	return strings.Join(parts, " ")
}

// isFirstPass: the message is a connector business's first pass, which
// asks for the founding plan.
func isFirstPass(message string) bool { return strings.HasPrefix(message, "First pass:") }

func asksAQuestion(message string) bool {
	m := strings.TrimSpace(message)
	return strings.HasSuffix(m, "?") || strings.Contains(strings.ToLower(m), "ask me")
}

func hasText(msg models.ModelMessage) bool {
	for _, b := range msg.Content {
		if b.Type == models.ContentText && strings.TrimSpace(b.Text) != "" {
			return true
		}
	}
	return false
}

func textOf(msg models.ModelMessage) string {
	var parts []string
	for _, b := range msg.Content {
		if b.Type == models.ContentText {
			parts = append(parts, b.Text)
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// subjectOf is the first line of s cut to subjectLen characters.
func subjectOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > subjectLen {
		// At a word boundary when there is one: "frame…" reads as a word.
		cut := string(r[:subjectLen])
		if !unicode.IsSpace(r[subjectLen]) {
			if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > 0 {
				cut = cut[:i]
			}
		}
		return strings.TrimSpace(cut) + "…"
	}
	return s
}

// chunk splits text into pieces of at most wordsPerChunk words that join
// back to text exactly.
func chunk(text string) []string {
	var chunks []string
	words := 0
	start := 0
	for i := 1; i <= len(text); i++ {
		if i == len(text) || (text[i] == ' ' && text[i-1] != ' ') {
			words++
			if words == wordsPerChunk || i == len(text) {
				chunks = append(chunks, text[start:i])
				start, words = i, 0
			}
		}
	}
	return chunks
}

func tokens(chars int) int64 {
	n := int64((chars + 3) / 4)
	if n < 1 {
		n = 1
	}
	return n
}
