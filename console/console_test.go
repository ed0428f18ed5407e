package console

import (
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStaticApp(t *testing.T) {
	e := newEnv(t)
	b := e.browser("127.0.0.1")
	f := func(path string, status int, want string) *reply {
		t.Helper()
		r := b.do("GET", path, nil)
		if r.status != status || (want != "" && !strings.HasPrefix(r.header.Get("Content-Type"), want)) {
			t.Errorf("GET %s: %d %q, want %d %q", path, r.status, r.header.Get("Content-Type"), status, want)
		}
		return r
	}
	if r := f("/", 302, ""); !strings.HasSuffix(r.header.Get("Location"), "/console/") {
		t.Errorf("/ redirects to %q", r.header.Get("Location"))
	}
	if r := b.do("GET", "/console", nil); r.status/100 != 3 || !strings.HasSuffix(r.header.Get("Location"), "/console/") {
		t.Errorf("/console: %d to %q", r.status, r.header.Get("Location"))
	}
	page := f("/console/", 200, "text/html")
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	f("/console/assets/app.css", 200, "text/css")
	f("/console/assets/icon.svg", 200, "image/svg+xml")
	f("/console/assets/nope.js", 404, "")

	// Every asset the page and the modules name exists, and is served as
	// what it is (a module served as anything but script does not run).
	refs := regexp.MustCompile(`(?:href|src)="assets/([^"]+)"|from '\./([^']+)'`)
	seen := map[string]bool{}
	queue := []string{"index.html"}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		body, err := fs.ReadFile(e.c.ui, name)
		if err != nil {
			t.Errorf("%s is referenced but not embedded", name)
			continue
		}
		for _, m := range refs.FindAllStringSubmatch(string(body), -1) {
			ref := m[1] + m[2]
			if !seen[ref] {
				seen[ref] = true
				queue = append(queue, ref)
				if strings.HasSuffix(ref, ".js") {
					f("/console/assets/"+ref, 200, "text/javascript")
				}
			}
		}
	}
	if !seen["playground.js"] || !seen["chart.js"] {
		t.Errorf("the walk missed modules: %v", seen)
	}
}

func TestPasswordHash(t *testing.T) {
	h := hashPassword("correct horse")
	if !regexp.MustCompile(`^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`).MatchString(h) {
		t.Fatalf("encoding %q", h)
	}
	if h == hashPassword("correct horse") {
		t.Error("two hashes of one password are equal: no salt")
	}
	f := func(encoded, password string, want bool, wantErr bool) {
		t.Helper()
		ok, err := checkPassword(encoded, password)
		if ok != want || (err != nil) != wantErr {
			t.Errorf("checkPassword(%q, %q) = %v, %v", encoded, password, ok, err)
		}
	}
	f(h, "correct horse", true, false)
	f(h, "correct horse ", false, false)
	f(h, "", false, false)
	f("$2a$10$bcrypt", "x", false, true)
	f(strings.Replace(h, "argon2id", "argon2i", 1), "correct horse", false, true)
	f(strings.Replace(h, "t=1", "t=0", 1), "correct horse", false, true)
	f(h[:len(h)-44]+"$!!", "correct horse", false, true)
	// The parameters are read from the hash, not the current defaults.
	saved := hashParams
	hashParams = argonParams{Time: 2, Memory: 128, Threads: 2}
	h2 := hashPassword("pw")
	hashParams = saved
	f(h2, "pw", true, false)
}

func TestRandomBase62(t *testing.T) {
	seen := map[byte]bool{}
	for range 200 {
		s := randomBase62(40)
		if len(s) != 40 || strings.Trim(s, base62) != "" {
			t.Fatalf("%q", s)
		}
		for i := range len(s) {
			seen[s[i]] = true
		}
	}
	// 8000 draws from 62 characters: each turns up.
	if len(seen) != 62 {
		t.Errorf("only %d distinct characters", len(seen))
	}
}

func TestFailures(t *testing.T) {
	f := newFailures(3, time.Minute)
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		if w := f.take("k", t0.Add(time.Duration(i)*10*time.Second)); w != 0 {
			t.Fatalf("attempt %d: wait %s", i, w)
		}
	}
	if w := f.take("k", t0.Add(30*time.Second)); w != 30*time.Second {
		t.Errorf("after 3 attempts: wait %s, want 30s (the oldest leaves the window at 60s)", w)
	}
	if w := f.take("k", t0.Add(31*time.Second)); w != 29*time.Second {
		t.Errorf("a refused attempt was counted: wait %s, want 29s", w)
	}
	if w := f.take("other", t0); w != 0 {
		t.Errorf("another key waits %s", w)
	}
	f.undo("k", t0.Add(10*time.Second)) // that attempt succeeded
	if w := f.take("k", t0.Add(40*time.Second)); w != 0 {
		t.Errorf("after undo: wait %s", w)
	}
	if w := f.take("k", t0.Add(41*time.Second)); w != 19*time.Second {
		t.Errorf("after undo and another attempt: wait %s, want 19s", w)
	}
	if w := f.take("k", t0.Add(61*time.Second)); w != 0 {
		t.Errorf("after the oldest left: wait %s", w)
	}
	f.forget("k")
	if w := f.take("k", t0.Add(62*time.Second)); w != 0 {
		t.Errorf("after forget: wait %s", w)
	}
	// A spray of keys is pruned once stale, and not scanned on every add
	// while fresh.
	for i := range 20000 {
		f.take(strconv.Itoa(i), t0)
	}
	if f.pruneSize < 20000 {
		t.Errorf("prune threshold %d after 20000 fresh keys: pruning would scan on every add", f.pruneSize)
	}
	for i := range f.pruneSize - len(f.seen) + 1 { // the last one prunes
		f.take("late"+strconv.Itoa(i), t0.Add(2*time.Minute))
	}
	if n := len(f.seen); n > f.pruneSize/2+1 {
		t.Errorf("%d keys kept after the stale ones should have gone", n)
	}
}

func TestKnownClients(t *testing.T) {
	k := newKnownClients(time.Hour, 3)
	t0 := time.Unix(1000, 0)
	k.add("ann", "1.1.1.1", t0)
	if !k.has("ann", "1.1.1.1", t0.Add(time.Hour)) || k.has("ann", "2.2.2.2", t0) || k.has("bob", "1.1.1.1", t0) {
		t.Fatal("has does not match the name and IP added")
	}
	if k.has("ann", "1.1.1.1", t0.Add(time.Hour+time.Second)) {
		t.Fatal("an entry outlives its ttl")
	}
	k.add("bob", "1", t0)
	k.add("cid", "1", t0.Add(2*time.Hour)) // full at 3: the two expired ones go
	k.add("dan", "1", t0.Add(2*time.Hour))
	if len(k.seen) != 2 || !k.has("cid", "1", t0.Add(2*time.Hour)) {
		t.Fatalf("after pruning expired entries: %v", k.seen)
	}
	k.add("eve", "1", t0.Add(2*time.Hour))
	k.add("fay", "1", t0.Add(2*time.Hour)) // full of live entries: all go
	if len(k.seen) != 1 || !k.has("fay", "1", t0.Add(2*time.Hour)) {
		t.Fatalf("under a spray: %v", k.seen)
	}
}
