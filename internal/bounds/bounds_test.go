package bounds

import (
	"testing"
	"time"
)

func TestOfScalesByTheFactorSetForTests(t *testing.T) {
	defer factor.Store(factor.Load())
	if got := Of(5 * time.Second); got != 5*time.Second {
		t.Fatalf("before any scaling Of(5s) = %v, want 5s", got)
	}
	ScaleForTests(6)
	if got := Of(5 * time.Second); got != 30*time.Second {
		t.Fatalf("scaled by 6, Of(5s) = %v, want 30s", got)
	}
	ScaleForTests(0)
	if got := Of(time.Second); got != 6*time.Second {
		t.Fatalf("a factor below 1 must be ignored: Of(1s) = %v, want 6s", got)
	}
}
