package console

import (
	"errors"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/store"
)

// TestModelNameRule: a key's allow-list and its model limits refuse the
// same names for the same reason, the one rule of modelNameProblem, and
// differ only on *.
func TestModelNameRule(t *testing.T) {
	message := func(err error) string {
		var e *apiError
		if !errors.As(err, &e) {
			return ""
		}
		return e.Message
	}
	f := func(name, want string) {
		t.Helper()
		allowed := message(checkModels("models", []string{name}))
		limited := message(checkModelLimits("model_limits", map[string]store.Limits{name: {RPM: 1}}))
		wantLimited := ""
		if want != "" {
			wantLimited = "model_limits: " + want
		}
		if allowed != want || limited != wantLimited {
			t.Errorf("%q: models %q, model_limits %q; want %q, %q", name, allowed, limited, want, wantLimited)
		}
	}
	f("gpt-4o", "")
	f(strings.Repeat("m", maxModelName), "")
	f("", `model names must be non-empty and hold no spaces, got ""`)
	f("has space", `model names must be non-empty and hold no spaces, got "has space"`)
	f("tab\there", `model names must be non-empty and hold no spaces, got "tab\there"`)
	f(strings.Repeat("m", maxModelName+1), `model name "mmmmmmmmmmmmmmmmmmmm"… is too long`)
}
