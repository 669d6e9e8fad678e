package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

// An event's data is answered as the store keeps it when it is one JSON
// object, and as {} otherwise, as it was when it went through a map.
func TestActivityDataIsTheStoredObject(t *testing.T) {
	for stored, want := range map[string]string{
		`{"document_type":"strategy","revision":3}`: `{"document_type":"strategy","revision":3}`,
		`{"n":12345678901234567890}`:                `{"n":12345678901234567890}`, // a map would have rounded it
		`{"html":"\u003cb\u003e"}`:                  `{"html":"\u003cb\u003e"}`,
		` {"a":{"b":[1,2]}}`:                        `{"a":{"b":[1,2]}}`,
		`{}`:                                        `{}`,
		``:                                          `{}`,
		`null`:                                      `{}`,
		`[1,2]`:                                     `{}`,
		`"text"`:                                    `{}`,
		`{"a":`:                                     `{}`,
		`{"a":1} {"b":2}`:                           `{}`,
	} {
		events := toActivityEvents([]models.ActivityEvent{{ID: "e1", Kind: models.ActivityDocumentUpdated, Actor: "user", Data: stored,
			CreatedAt: time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)}})
		b, err := json.Marshal(events[0])
		require.NoError(t, err, "stored %q", stored)
		var got struct{ Data json.RawMessage }
		require.NoError(t, json.Unmarshal(b, &got))
		assert.JSONEq(t, want, string(got.Data), "stored %q", stored)

		// The same object a map gave.
		var viaMap, answered map[string]any
		if json.Unmarshal([]byte(stored), &viaMap) != nil || viaMap == nil {
			viaMap = map[string]any{}
		}
		require.NoError(t, json.Unmarshal(got.Data, &answered))
		assert.Equal(t, viaMap, answered, "stored %q", stored)
	}
}

// The OpenAPI schema of data is still a map's: an object of any members.
func TestActivityDataSchemaIsAMaps(t *testing.T) {
	schema := func(v any) string {
		r := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
		s := r.Schema(reflect.TypeOf(v), false, "")
		b, err := json.Marshal(s)
		require.NoError(t, err)
		return string(b)
	}
	assert.JSONEq(t, schema(map[string]any{}), schema(ActivityData(nil)))
}
