package store

// Tests of the store under several writers, several openers and a process
// killed mid-write.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func testConcurrentWriters(t *testing.T, f *fixture) {
	const writers, batches, rowsPerBatch, keysPerWriter = 8, 10, 20, 10
	owner := f.user(t, "owner")
	var wg sync.WaitGroup
	errs := make(chan error, 3*writers)
	for g := range writers {
		wg.Go(func() {
			for b := range batches {
				rows := make([]Usage, rowsPerBatch)
				for i := range rows {
					rows[i] = Usage{Time: at(time.Duration(b) * time.Second), KeyID: int64(100 + g), Status: 200, Input: 1}
				}
				if err := f.s.AddUsage(f.ctx, rows); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			for i := range keysPerWriter {
				k := &Key{Name: "k", OwnerID: owner.ID, Hash: sha256.Sum256(fmt.Appendf(nil, "%d-%d", g, i))}
				if err := f.s.CreateKey(f.ctx, k); err != nil {
					errs <- err
					return
				}
				k.Name = "renamed"
				if err := f.s.UpdateKey(f.ctx, k); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err) // SQLITE_BUSY would show here
	}
	spend, err := f.s.Spend(f.ctx, nil)
	must(t, err)
	for g := range writers {
		if got := spend[int64(100+g)]; got.Requests != batches*rowsPerBatch || got.Input != batches*rowsPerBatch {
			t.Fatalf("writer %d: %+v, want %d requests", g, got, batches*rowsPerBatch)
		}
	}
	if n := f.count(t, `SELECT COUNT(*) FROM usage_log`); n != writers*batches*rowsPerBatch {
		t.Fatalf("%d usage rows, want %d", n, writers*batches*rowsPerBatch)
	}
	keys, err := f.s.Keys(f.ctx, owner.ID)
	must(t, err)
	if len(keys) != writers*keysPerWriter {
		t.Fatalf("%d keys, want %d", len(keys), writers*keysPerWriter)
	}
}

func testMigrations(t *testing.T, f *fixture) {
	list, err := migrations(f.driver)
	must(t, err)
	if len(list) == 0 {
		t.Fatal("no migrations embedded")
	}
	checkMigrations(t, f, list)
	u := f.user(t, "kept")

	// Re-open, with the first store still open: nothing is applied twice,
	// nothing is lost.
	again := f.open(t, Options{SecretKey: f.secret})
	checkMigrations(t, f, list)
	got, err := again.User(f.ctx, u.ID)
	must(t, err)
	wantEqual(t, "user after re-open", got, u)
}

// checkMigrations checks each migration is recorded exactly once.
func checkMigrations(t *testing.T, f *fixture, list []migration) {
	t.Helper()
	for _, m := range list {
		if n := f.count(t, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1 AND name = $2`, m.version, m.name); n != 1 {
			t.Fatalf("migration %s recorded %d times", m.name, n)
		}
	}
	if n := f.count(t, `SELECT COUNT(*) FROM schema_migrations`); n != len(list) {
		t.Fatalf("%d migrations recorded, want %d", n, len(list))
	}
}

// testConcurrentOpen opens one empty database from several pools at once,
// as several nodes (or processes) starting together do.
func testConcurrentOpen(t *testing.T, f *fixture) {
	const openers = 4
	fresh := &fixture{backend: f.backend, dsn: f.newDSN(t), ctx: f.ctx}
	stores := make([]Store, openers)
	errs := make([]error, openers)
	var wg sync.WaitGroup
	for i := range openers {
		wg.Go(func() { stores[i], errs[i] = Open(f.ctx, fresh.driver, fresh.dsn, Options{}) })
	}
	wg.Wait()
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatalf("opener %d: %v", i, errs[i])
		}
		t.Cleanup(func() { s.Close() })
	}
	fresh.s = stores[0]
	list, err := migrations(f.driver)
	must(t, err)
	checkMigrations(t, fresh, list)
}

// The killed-process test re-runs this test binary as a child that writes
// in a loop and prints what it has committed, and kills it with SIGKILL
// mid-loop. Every printed commit must be in the database afterwards, and
// every batch whole or absent.
const (
	childEnv       = "ROSETTA_STORE_KILL_CHILD" // the driver
	childDSNEnv    = "ROSETTA_STORE_KILL_DSN"
	childBatchRows = 5
	childLines     = 40 // commits seen before the kill
)

func testKilledProcess(t *testing.T, f *fixture) {
	exe, err := os.Executable()
	must(t, err)
	cmd := exec.CommandContext(f.ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+f.driver, childDSNEnv+"="+f.dsn)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() { // to EOF: lines printed before the kill are still in the pipe
		lines = append(lines, sc.Text())
		if len(lines) == childLines {
			must(t, cmd.Process.Kill())
		}
	}
	err = cmd.Wait()
	if len(lines) < childLines || !strings.Contains(fmt.Sprint(err), "killed") {
		t.Fatalf("child: %v after %d lines\n%s", err, len(lines), stderr.String())
	}

	batches := map[string]int{} // batch → rows stored
	rows, err := f.s.Usage(f.ctx, UsageFilter{Limit: 10000})
	must(t, err)
	for _, u := range rows {
		batches[u.Model]++
	}
	t.Logf("child printed %d commits; %d batches stored", len(lines), len(batches))
	for _, n := range batches {
		if n != childBatchRows {
			t.Fatalf("a batch has %d rows stored, want %d: a transaction was torn (%v)", n, childBatchRows, batches)
		}
	}
	for _, line := range lines {
		kind, v, _ := strings.Cut(line, " ")
		switch kind {
		case "usage":
			if batches[v] != childBatchRows {
				t.Fatalf("committed batch %s is missing", v)
			}
		case "user":
			id, _ := strconv.ParseInt(v, 10, 64)
			if _, err := f.s.User(f.ctx, id); err != nil {
				t.Fatalf("committed user %d: %v", id, err)
			}
		default:
			t.Fatalf("child printed %q", line)
		}
	}
}

// killChildMain is the child's side: commit forever, printing each commit
// once it returned. The parent kills it; the deadline only guards against
// an orphan.
func killChildMain() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, os.Getenv(childEnv), os.Getenv(childDSNEnv), Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for i := 0; ctx.Err() == nil; i++ {
		batch := fmt.Sprintf("b%d", i)
		rows := make([]Usage, childBatchRows)
		for j := range rows {
			rows[j] = Usage{Time: time.Now(), KeyID: 1, Model: batch, RequestID: fmt.Sprintf("%s-%d", batch, j)}
		}
		if err := s.AddUsage(ctx, rows); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("usage", batch)
		u := &User{Name: fmt.Sprintf("u%d", i), Role: RoleUser}
		if err := s.CreateUser(ctx, u); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("user", u.ID)
	}
	os.Exit(3)
}

func testUsageWriterStore(t *testing.T, f *fixture) {
	u := f.user(t, "ann")
	keys := []*Key{f.key(t, u.ID, "a"), f.key(t, u.ID, "b"), f.key(t, u.ID, "c")}
	var errs []error
	w := NewUsageWriter(f.s, UsageWriterOptions{Batch: 7, Interval: 10 * time.Millisecond, OnError: func(err error) { errs = append(errs, err) }})
	const n = 100
	last := map[int64]time.Time{}
	for i := range n {
		k := keys[i%len(keys)]
		u := Usage{Time: at(time.Duration(i) * time.Second), KeyID: k.ID, RequestID: fmt.Sprint(i)}
		if !w.Record(u) {
			t.Fatalf("Record %d refused", i)
		}
		last[k.ID] = u.Time
	}
	must(t, w.Close(f.ctx))
	if len(errs) > 0 || w.Dropped() != 0 || w.Failed() != 0 {
		t.Fatalf("errors %v, dropped %d, failed %d", errs, w.Dropped(), w.Failed())
	}
	if got := f.count(t, `SELECT COUNT(*) FROM usage_log`); got != n {
		t.Fatalf("%d rows written, want %d", got, n)
	}
	for _, k := range keys {
		got, err := f.s.Key(f.ctx, k.ID)
		must(t, err)
		wantEqual(t, "LastUsed", got.LastUsed, last[k.ID])
	}
	if w.Record(Usage{}) || w.Dropped() != 1 {
		t.Fatal("Record after Close was accepted")
	}
}

// A burst of Record calls from several goroutines, as fast as they go,
// then Close, which is what SIGTERM comes to in rosetta serve: every row
// Record took is written. With a buffer that holds the burst none is
// dropped; with the default one, those dropped are counted and the rest
// written.
func testUsageWriterBurst(t *testing.T, f *fixture) {
	const goroutines, perGoroutine = 8, burstRows / 8
	for _, c := range []struct {
		name   string
		buffer int
	}{{"buffer holds the burst", burstRows}, {"default buffer", 0}} {
		before := f.count(t, `SELECT COUNT(*) FROM usage_log`)
		var mu sync.Mutex
		var errs []error
		w := NewUsageWriter(f.s, UsageWriterOptions{Buffer: c.buffer, OnError: func(err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}})
		var wg sync.WaitGroup
		var accepted atomic.Int64
		start := time.Now()
		for g := range goroutines {
			wg.Go(func() {
				for i := range perGoroutine {
					if w.Record(Usage{Time: start, KeyID: int64(1 + g), KeyName: "burst", Model: "m", Channel: "c",
						Status: 200, Input: int64(i), RequestID: fmt.Sprintf("%d-%d", g, i), ClientStyle: "openai"}) {
						accepted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		recorded := time.Since(start)
		must(t, w.Close(f.ctx))
		written := f.count(t, `SELECT COUNT(*) FROM usage_log`) - before
		t.Logf("%s: %d rows recorded in %s, %d dropped, %d written when Close returned after %s",
			c.name, goroutines*perGoroutine, recorded.Round(time.Millisecond), w.Dropped(), written, time.Since(start).Round(time.Millisecond))
		if len(errs) > 0 || w.Failed() != 0 || int64(written) != accepted.Load() || accepted.Load()+w.Dropped() != goroutines*perGoroutine {
			t.Fatalf("%s: %d accepted, %d written, %d dropped, %d failed, errors %v",
				c.name, accepted.Load(), written, w.Dropped(), w.Failed(), errs)
		}
		if c.buffer >= burstRows && w.Dropped() != 0 {
			t.Fatalf("%s: %d rows dropped", c.name, w.Dropped())
		}
	}
}
