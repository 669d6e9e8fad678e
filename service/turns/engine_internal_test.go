package turns

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"holdco/models"
)

func TestConversationDropsUnansweredToolCallsAndMergesRoles(t *testing.T) {
	text := func(s string) models.ContentBlock { return models.ContentBlock{Type: models.ContentText, Text: s} }
	use := func(id string) models.ContentBlock {
		return models.ContentBlock{Type: models.ContentToolUse, ToolUseID: id, ToolName: "list_files", Input: []byte(`{}`)}
	}
	result := func(id string) models.ContentBlock {
		return models.ContentBlock{Type: models.ContentToolResult, ToolUseID: id, Text: "{}"}
	}
	got := conversation([]models.TurnMessage{
		{Role: models.RoleUser, Content: []models.ContentBlock{text("hi")}},
		{Role: models.RoleAssistant, Content: []models.ContentBlock{text("looking"), use("a"), use("b")}},
		{Role: models.RoleUser, Content: []models.ContentBlock{result("a")}}, // b was interrupted
		{Role: models.RoleUser, Content: []models.ContentBlock{text("go on")}},
		{Role: models.RoleAssistant, Content: []models.ContentBlock{use("c")}}, // interrupted before its result
		{Role: models.RoleUser, Content: []models.ContentBlock{text("again")}},
	})
	assert.Equal(t, []models.ModelMessage{
		{Role: models.RoleUser, Content: []models.ContentBlock{text("hi")}},
		{Role: models.RoleAssistant, Content: []models.ContentBlock{text("looking"), use("a")}},
		{Role: models.RoleUser, Content: []models.ContentBlock{result("a"), text("go on")}},
		{Role: models.RoleAssistant, Content: []models.ContentBlock{text("(interrupted)")}},
		{Role: models.RoleUser, Content: []models.ContentBlock{text("again")}},
	}, got)
}
