package rawjson

import "testing"

// TestKeySet: a key named twice is told, keys that share a bit are told
// apart by Repeats, and distinct keys cost no comparison.
func TestKeySet(t *testing.T) {
	for _, c := range []struct {
		obj     string
		repeats bool
	}{
		{`{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`, false},
		{`{"total_tokens":3,"total_tokens":99}`, true},
		{`{"a":1,"b":2,"a":3}`, true},
		{`{"aa":1,"ab":2}`, false}, // one bit (the first byte), two keys
		{`{}`, false},
	} {
		var s KeySet
		for m := Members([]byte(c.obj)); m.NextKey() && m.PassValue(); {
			s.Add(m.Key())
		}
		if got := s.Repeats([]byte(c.obj)); got != c.repeats {
			t.Errorf("KeySet of %s: Repeats %v, want %v", c.obj, got, c.repeats)
		}
	}
}
