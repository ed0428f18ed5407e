package console

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rosetta-gateway/rosetta/store"
)

// Input rules shared by the forms. Each check names the field it reports
// on, so the app can put the message next to the right control.

const (
	maxName      = 64
	maxModelName = 200
	maxPassword  = 1024 // bytes: argon2 hashes the whole of it
)

var (
	userNameRule    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]*$`)
	channelNameRule = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// checkLabel accepts a human-readable name: 1 to 64 characters, no
// control characters, no surrounding spaces.
func checkLabel(field, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return badField(field, "%s is required", field)
	case utf8.RuneCountInString(v) > maxName:
		return badField(field, "%s is longer than %d characters", field, maxName)
	case strings.TrimSpace(v) != v:
		return badField(field, "%s must not start or end with spaces", field)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return badField(field, "%s must not hold control characters", field)
	}
	return nil
}

// checkIdent accepts a name used in URLs and logs: 1 to 64 of the
// characters rule allows, starting with a letter or digit.
func checkIdent(field, v string, rule *regexp.Regexp, allowed string) error {
	if err := checkLabel(field, v); err != nil {
		return err
	}
	if !rule.MatchString(v) {
		return badField(field, "%s may hold only %s, and starts with a letter or digit", field, allowed)
	}
	return nil
}

func checkPasswordRule(field, v string) error {
	switch n := utf8.RuneCountInString(v); {
	case n < minPassword:
		return badField(field, "the password needs at least %d characters", minPassword)
	case len(v) > maxPassword:
		return badField(field, "the password is longer than %d bytes", maxPassword)
	}
	return nil
}

// checkModels accepts a key's allow-list: exact names, "*", or prefixes
// ending in "*".
func checkModels(field string, models []string) error {
	if len(models) == 0 {
		return badField(field, "list at least one model, or * for all")
	}
	for _, m := range models {
		if problem := modelNameProblem(m); problem != "" {
			return badField(field, "%s", problem)
		}
		if strings.Contains(strings.TrimSuffix(m, "*"), "*") {
			return badField(field, "%q: * may only end a model name", m)
		}
	}
	return nil
}

// modelNameProblem says what makes m no model name (empty, spaced, too
// long), or "" when nothing does. Whether * may end it is the caller's.
func modelNameProblem(m string) string {
	switch {
	case m == "" || strings.IndexFunc(m, unicode.IsSpace) >= 0:
		return fmt.Sprintf("model names must be non-empty and hold no spaces, got %q", m)
	case len(m) > maxModelName:
		return fmt.Sprintf("model name %.20q… is too long", m)
	}
	return ""
}

func checkNonNegative(field string, v int64) error {
	if v < 0 {
		return badField(field, "%s must be 0 or more, got %d", field, v)
	}
	return nil
}

// setLimits copies the rpm and tpm given (nil: unchanged) onto rpm and
// tpm, once both are checked.
func setLimits(inRPM, inTPM *int64, rpm, tpm *int64) error {
	for _, f := range []struct {
		name string
		in   *int64
	}{{"rpm", inRPM}, {"tpm", inTPM}} {
		if f.in != nil {
			if err := checkNonNegative(f.name, *f.in); err != nil {
				return err
			}
		}
	}
	setIf(inRPM, rpm)
	setIf(inTPM, tpm)
	return nil
}

// maxModelLimits bounds a key's limits on single models: a key is cached
// whole on every node.
const maxModelLimits = 100

// checkModelLimits accepts a key's limits on single models: each names
// one public model exactly (the limit applies to requests naming it) and
// sets rpm or tpm, or both, above 0. An error names the model and, in
// field, where it is: model_limits["gpt-4o"].rpm.
func checkModelLimits(field string, limits map[string]store.Limits) error {
	if len(limits) > maxModelLimits {
		return badField(field, "at most %d model limits, got %d", maxModelLimits, len(limits))
	}
	for _, model := range slices.Sorted(maps.Keys(limits)) {
		at := fmt.Sprintf("%s[%q]", field, model)
		lim := limits[model]
		if problem := modelNameProblem(model); problem != "" {
			return badField(at, "model_limits: %s", problem)
		}
		switch {
		case strings.Contains(model, "*"):
			return badField(at, "model_limits: %q: a limit is on one model, named exactly (no *)", model)
		case lim.RPM < 0:
			return badField(at+".rpm", "model_limits: %q: rpm must be 0 or more, got %d", model, lim.RPM)
		case lim.TPM < 0:
			return badField(at+".tpm", "model_limits: %q: tpm must be 0 or more, got %d", model, lim.TPM)
		case lim == store.Limits{}:
			return badField(at, "model_limits: %q: set rpm or tpm above 0, or remove the model", model)
		}
	}
	return nil
}

// parseFuture reads an RFC 3339 time that must lie after now; "" is the
// zero time (never).
func parseFuture(field, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, badField(field, "%s must be an RFC 3339 time such as 2030-01-02T15:04:05Z", field)
	}
	if !t.After(now) {
		return time.Time{}, badField(field, "%s must be in the future", field)
	}
	return t, nil
}
