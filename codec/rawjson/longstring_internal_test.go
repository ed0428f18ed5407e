package rawjson

import (
	"strings"
	"testing"
)

// TestValidLongEscapedString: a long string with an escape every 32 bytes
// is read in linear time, by Valid and by the string checker, measured by
// the searches for its closing quote made again (searchedAgain), each from
// an escaped quote to the next quote. The search was made again after each
// escape, which took 30 s for 4 MB of prose with line breaks (\n); the
// quote found is now kept, so such a string is searched once, and one with
// escaped quotes (\") at most once per escaped quote: 16 times as often
// for 16 times the text. The vector search (plainRun) stops at either,
// so it reads each byte once and searches nothing again.
func TestValidLongEscapedString(t *testing.T) {
	countSearches = true
	defer func() { countSearches = false }()
	bothWays(t, func(way string) { validLongEscapedString(t, way) })
}

func validLongEscapedString(t *testing.T, way string) {
	searched := func(line string, lines int) (valid, checked int64) {
		t.Helper()
		s := `"` + strings.Repeat(line, lines) + `"`
		before := searchedAgain.Load()
		if !Valid([]byte(`{"content":` + s + `}`)) {
			t.Fatal("not valid")
		}
		valid = searchedAgain.Load() - before
		if end, _ := stringEnd([]byte(s), 1); end != len(s) {
			t.Fatalf("stringEnd = %d, want %d", end, len(s))
		}
		return valid, searchedAgain.Load() - before - valid
	}
	const small, large = 1 << 13, 1 << 17 // lines: ~256 KB and ~4 MB
	for _, line := range []string{`line of prose, thirty bytes.\n`, `a \"quoted\" line, 32 bytes. \"`} {
		sv, sc := searched(line, small)
		lv, lc := searched(line, large)
		quotes := int64(strings.Count(line, `\"`)) * large
		if quotes == 0 || way == "vector" {
			if sv+sc+lv+lc != 0 {
				t.Errorf("%s: %q: searched again %d, %d, %d, %d times, want never", way, line, sv, sc, lv, lc)
			}
			continue
		}
		for _, c := range []struct {
			name         string
			small, large int64
		}{{"Valid", sv, lv}, {"stringEnd", sc, lc}} {
			// At most once per escaped quote, and 16 times the smaller's
			// within 1 % (the ends of the string differ).
			if c.large <= 0 || c.large > quotes || c.large*100 < c.small*16*99 || c.large*100 > c.small*16*101 {
				t.Errorf("%q: %s searched again %d times in 4 MB (%d escaped quotes), %d in 256 KB", line, c.name, c.large, quotes, c.small)
			}
		}
	}
}
