package models

import (
	"encoding/json"
	"errors"
	"testing"
)

// A shared error decorated by two requests must not change: With, WithField
// and Wrap return copies.
func TestErrorDecoratorsCopy(t *testing.T) {
	base := Errorf(CodeConflict, "Taken.").With("a", 1)
	cause := errors.New("cause")
	one := base.With("b", 2).WithField("name").Wrap(cause)
	if _, ok := base.Extra["b"]; ok || base.Field != "" || base.Err != nil {
		t.Fatalf("base was changed: %+v", base)
	}
	if one.Extra["a"] != 1 || one.Extra["b"] != 2 || one.Field != "name" || !errors.Is(one, cause) {
		t.Fatalf("copy lacks decorations: %+v", one)
	}
}

func TestErrorBodyFlattensExtra(t *testing.T) {
	b := BodyOf(Errorf(CodeHandleTaken, "Taken.").WithField("handle").With("suggested_handle", "x-2"))
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if m["error"] != "handle_taken" || m["detail"] != "Taken." || m["field"] != "handle" || m["suggested_handle"] != "x-2" || len(m) != 4 {
		t.Fatalf("body %s", raw)
	}
}
