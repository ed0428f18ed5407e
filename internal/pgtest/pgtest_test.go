package pgtest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	code := m.Run()
	StopShared()
	os.Exit(code)
}

// TestNewDatabase checks each test gets its own writable database.
func TestNewDatabase(t *testing.T) {
	ctx := context.Background()
	a, b := connect(t, NewDatabase(t)), connect(t, NewDatabase(t))
	if _, err := a.Exec(ctx, "CREATE TABLE t (v int); INSERT INTO t VALUES (41)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := a.QueryRow(ctx, "SELECT v + 1 FROM t").Scan(&n); err != nil || n != 42 {
		t.Fatalf("got %d, %v; want 42", n, err)
	}
	if _, err := b.Exec(ctx, "SELECT v FROM t"); err == nil {
		t.Fatal("the second database sees the first one's table")
	}
}

// TestStop checks Stop ends the server and removes its directory.
func TestStop(t *testing.T) {
	Shared(t) // skips or fails like every other test when the binaries are missing
	srv, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	connect(t, srv.DSN("postgres"))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(srv.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("directory after Stop: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if c, err := pgx.Connect(ctx, srv.DSN("postgres")); err == nil {
		c.Close(ctx)
		t.Fatal("server still accepts connections after Stop")
	}
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c
}
