// Package pgtest starts throwaway PostgreSQL servers for tests: initdb into
// a temporary directory, postgres on a free loopback port with its unix
// socket in that directory and fsync off, removed again on Stop. It needs
// the server binaries (Debian's postgresql package; `make deps` installs
// it), found in PATH or in /usr/lib/postgresql/*/bin.
//
// initdb and postgres refuse to run as root, and tests here run as root: as
// root, the server runs as the "postgres" system user, which owns the
// temporary directory. The directory is made under os.TempDir(), which
// that user must be able to traverse (/tmp is).
//
// A test package shares one server (Shared) and gives each test its own
// database (NewDatabase); its TestMain calls StopShared after m.Run.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNotInstalled is returned when the PostgreSQL server binaries are not
// found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL server binaries (initdb, postgres) not found in PATH or /usr/lib/postgresql/*/bin; install Debian's postgresql package (make deps)")

// Server is a running throwaway PostgreSQL server.
type Server struct {
	Dir  string // the temporary directory: data/, the socket, server.log
	Port int

	cred    *syscall.Credential // nil when not root
	exited  chan struct{}       // closed when the postmaster exits
	stopped atomic.Bool
	proc    *os.Process
}

// Start initialises and starts a server. Stop it with Stop.
func Start(ctx context.Context) (*Server, error) {
	bin, err := findBin()
	if err != nil {
		return nil, err
	}
	s := &Server{}
	if s.cred, err = serverCredential(); err != nil {
		return nil, err
	}
	if s.Dir, err = s.makeDir(); err != nil {
		return nil, err
	}
	if err := s.initdb(ctx, bin); err != nil {
		os.RemoveAll(s.Dir)
		return nil, err
	}
	// Another process may take the free port between our check and the
	// server's bind; then the server exits and we try another port.
	for range 3 {
		if err = s.start(ctx, bin); err == nil {
			return s, nil
		}
	}
	os.RemoveAll(s.Dir)
	return nil, err
}

// findBin returns the directory holding initdb and postgres.
func findBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "postgres")); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// Newest major version first.
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) > pgMajor(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNotInstalled
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// serverCredential is the user the server runs as: the current one, or
// "postgres" when that is root.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses root: need the postgres system user: %w", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func (s *Server) makeDir() (string, error) {
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return "", err
	}
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// command prepares a server binary to run as the server's user.
func (s *Server) command(ctx context.Context, bin, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	return cmd
}

func (s *Server) initdb(ctx context.Context, bin string) error {
	cmd := s.command(ctx, bin, "initdb", "-D", filepath.Join(s.Dir, "data"), "-U", "postgres",
		"--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	return nil
}

// start runs the postmaster on a free port and waits until it accepts
// connections.
func (s *Server) start(ctx context.Context, bin string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port = port
	var log bytes.Buffer
	cmd := s.command(context.Background(), bin, "postgres", "-D", filepath.Join(s.Dir, "data"),
		"-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", s.Dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = &log, &log
	// If the test binary dies (a timeout, a panic), take the server with
	// it: SIGQUIT is PostgreSQL's immediate shutdown.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	s.exited = make(chan struct{})
	started := make(chan error, 1)
	go s.supervise(cmd, started)
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	if err := s.waitReady(ctx); err != nil {
		s.halt()
		return fmt.Errorf("%w\n%s", err, log.String())
	}
	return nil
}

// supervise starts cmd and waits for it on one locked OS thread: Pdeathsig
// fires when the thread that started the child exits, so that thread must
// live as long as the server.
func (s *Server) supervise(cmd *exec.Cmd, started chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(s.exited)
	if err := cmd.Start(); err != nil {
		started <- err
		return
	}
	s.proc = cmd.Process
	started <- nil
	cmd.Wait()
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		c, err := pgx.Connect(ctx, s.DSN("postgres"))
		if err == nil {
			return c.Close(ctx)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("pgtest: postgres exited on start (port %d)", s.Port)
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres not ready: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// DSN is the connection string for database db on the server.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=%s sslmode=disable", s.Port, db)
}

// CreateDatabase makes an empty database and returns its DSN.
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	c, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

// Stop shuts the server down at once (it is throwaway: no checkpoint) and
// removes its directory.
func (s *Server) Stop() error {
	if s.stopped.Swap(true) {
		return nil
	}
	s.halt()
	return os.RemoveAll(s.Dir)
}

// halt stops the postmaster with an immediate shutdown, then a kill if it
// lingers, and waits for it to exit.
func (s *Server) halt() {
	s.proc.Signal(syscall.SIGQUIT) // an error means it has exited already
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.proc.Kill()
		<-s.exited
	}
}

var shared struct {
	once sync.Once
	srv  *Server
	err  error
	n    atomic.Int64
}

// Shared returns the package's server, starting it on first use. When the
// binaries are missing the test is skipped with a clear message, or fails
// when CI=true: CI must not pass by skipping.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() {
		shared.srv, shared.err = Start(context.Background())
	})
	if shared.err != nil {
		if errors.Is(shared.err, ErrNotInstalled) && os.Getenv("CI") != "true" {
			tb.Skip(shared.err)
		}
		tb.Fatal(shared.err)
	}
	return shared.srv
}

// NewDatabase creates a fresh database on the shared server for one test
// and returns its DSN.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	srv := Shared(tb)
	name := fmt.Sprintf("t%d_%s", shared.n.Add(1), sanitize(tb.Name()))
	dsn, err := srv.CreateDatabase(context.Background(), name)
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

// sanitize keeps a database name short and plain (PostgreSQL cuts names at
// 63 bytes).
func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
	return strings.ToLower(s[max(0, len(s)-40):])
}

// StopShared stops the shared server if one was started. Call it from
// TestMain after m.Run.
func StopShared() {
	if shared.srv != nil {
		shared.srv.Stop()
	}
}
