package contract_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/workflows/contract"
)

// TestFoundingAnswerHandleIsAJSONCompatibleAddition: an answer sent
// before the handle existed reads as an answer without one, and an answer
// without one is written as before, so running interviews (their updates
// and RecordAnswer inputs) keep working.
func TestFoundingAnswerHandleIsAJSONCompatibleAddition(t *testing.T) {
	var a contract.FoundingAnswer
	require.NoError(t, json.Unmarshal([]byte(`{"Action":"accept","Text":""}`), &a))
	assert.Equal(t, contract.FoundingAnswer{Action: contract.FoundingActionAccept}, a)
	b, err := json.Marshal(contract.FoundingAnswer{Action: contract.FoundingActionAccept})
	require.NoError(t, err)
	assert.JSONEq(t, `{"Action":"accept","Text":""}`, string(b))
	b, err = json.Marshal(contract.FoundingAnswer{Action: contract.FoundingActionAccept, Handle: "kin-trails"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"Action":"accept","Text":"","Handle":"kin-trails"}`, string(b))
}

// TestValidateFoundingAnswerHandle: a handle comes with accept only and
// is a handle as normalized.
func TestValidateFoundingAnswerHandle(t *testing.T) {
	assert.Empty(t, contract.ValidateFoundingAnswer(contract.FoundingAnswer{Action: contract.FoundingActionAccept, Handle: "kin-trails"}))
	assert.NotEmpty(t, contract.ValidateFoundingAnswer(contract.FoundingAnswer{Action: contract.FoundingActionAccept, Handle: "Kin Trails"}))
	assert.NotEmpty(t, contract.ValidateFoundingAnswer(contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "yes", Handle: "kin-trails"}))
	assert.NotEmpty(t, contract.ValidateFoundingAnswer(contract.FoundingAnswer{Action: contract.FoundingActionWithdraw, Handle: "kin-trails"}))
}
