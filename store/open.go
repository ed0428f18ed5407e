package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Options tune Open. The zero value works, except that channels with API
// keys then cannot be saved or read (see SecretKey).
type Options struct {
	// SecretKey seals channel API keys at rest: 32 bytes for AES-256-GCM,
	// usually from LoadSecretKey. Nil: channels without API keys still
	// work; saving or reading API keys fails with ErrSecretKey.
	SecretKey []byte
	// MaxConns caps the connections to PostgreSQL, and the reading
	// connections to SQLite (SQLite writes through one). Default 8.
	MaxConns int
	// BusyTimeout is how long SQLite waits for another process's write
	// lock before failing with SQLITE_BUSY. Default 5s.
	BusyTimeout time.Duration
}

func (o *Options) defaults() {
	if o.MaxConns <= 0 {
		o.MaxConns = 8
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
}

// dialect is what differs between the drivers. The queries themselves are
// shared: both accept $1 placeholders (modernc binds $N to the N-th
// argument), RETURNING, and integer arithmetic on the *_ns columns.
type dialect struct {
	name string // also the directory of its migrations
	// insertUsage inserts a batch's rows, labelled labels, on dc, the
	// driver's connection in a transaction (see AddUsage), and returns
	// the first one's id: the others follow it.
	insertUsage func(ctx context.Context, s *sqlStore, dc any, rows []Usage, labels []int64) (first int64, err error)
	// addSums adds a batch's minutes to usage_minutes and moves its keys'
	// last-used times on dc, in the transaction of its rows (eachSum).
	addSums func(ctx context.Context, s *sqlStore, dc any, m map[minuteKey]minuteSums) error
	// lockMigrations runs first in every migration transaction so two
	// processes opening one database at once apply each migration once.
	// SQLite needs none: its transactions begin IMMEDIATE, which already
	// holds the database's single write lock.
	lockMigrations string
	unique         func(error) bool // a UNIQUE or PRIMARY KEY violation
	foreignKey     func(error) bool // a FOREIGN KEY violation
}

var sqliteDialect = &dialect{
	name:        "sqlite",
	insertUsage: insertUsageSQLite,
	addSums:     addSumsSQLite,
	unique: func(err error) bool {
		c := sqliteCode(err)
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	},
	foreignKey: func(err error) bool { return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY },
}

var postgresDialect = &dialect{
	name:        "postgres",
	insertUsage: copyUsagePostgres,
	addSums:     addSumsPostgres,
	// Any constant works as long as it is the same in every process; this
	// one is "rosetta" in ASCII, 0x726f7365747461 (PostgreSQL 15 has no
	// hex literals).
	lockMigrations: "SELECT pg_advisory_xact_lock(32210688759067745)",
	unique:         func(err error) bool { return pgCode(err) == "23505" },
	foreignKey:     func(err error) bool { return pgCode(err) == "23503" },
}

func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Open connects to the store and brings its schema up to date. driver is
// "sqlite" (dsn is a file path, created when missing) or "postgres" (dsn is
// anything pgx accepts: a URL or key=value pairs).
func Open(ctx context.Context, driver, dsn string, opts Options) (Store, error) {
	opts.defaults()
	var seal *Sealer
	if opts.SecretKey != nil {
		var err error
		if seal, err = NewSealer(opts.SecretKey); err != nil {
			return nil, err
		}
	}
	var s *sqlStore
	var err error
	switch driver {
	case "sqlite":
		s, err = openSQLite(ctx, dsn, opts)
	case "postgres":
		s, err = openPostgres(ctx, dsn, opts)
	default:
		return nil, fmt.Errorf("store: unknown driver %q (want sqlite or postgres)", driver)
	}
	if err != nil {
		return nil, err
	}
	s.seal = seal
	s.labels = make(map[usageLabel]int64)
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openSQLite opens two pools on the file: one connection for every write,
// several for reads. SQLite allows one writer at a time per database; with
// many writing connections in one process, a transaction that read before
// writing can fail at once with SQLITE_BUSY (busy_timeout does not help a
// read lock that must become a write lock in WAL mode), and the others poll
// in busy_timeout's sleep loop. One writer connection queues writes in
// database/sql instead, in order, with no busy errors; its transactions
// begin IMMEDIATE so even a read-then-write transaction takes the write
// lock first. busy_timeout remains for other processes on the same file.
// In WAL mode readers never block the writer nor each other.
func openSQLite(ctx context.Context, path string, o Options) (*sqlStore, error) {
	if path == "" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") || path == ":memory:" {
		return nil, fmt.Errorf("store: sqlite dsn must be a plain file path, got %q", path)
	}
	w, err := sql.Open("sqlite", sqliteDSN(path, o, false))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	// The writer connects first: it switches the file to WAL, which
	// persists in the file, before any reader opens it.
	if err := connectWriter(ctx, w, o.BusyTimeout); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: cannot open sqlite %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", sqliteDSN(path, o, true))
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(o.MaxConns)
	r.SetMaxIdleConns(o.MaxConns)
	s := &sqlStore{d: sqliteDialect, w: w, r: r}
	s.slotN, s.slot = newBatchSlot()
	return s, nil
}

// connectWriter connects the writer. Pools or processes that open a new
// file at once each switch it to WAL, and one may fail at once with
// SQLITE_BUSY, busy_timeout or not (the switch takes the file's exclusive
// lock, which SQLite does not wait for there), so the connect is tried
// again until busy_timeout has passed.
func connectWriter(ctx context.Context, w *sql.DB, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := w.PingContext(ctx)
		if err == nil || sqliteCode(err)&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// sqliteDSN spells the connection settings. synchronous=NORMAL in WAL mode
// syncs at checkpoints, not at every commit: a commit survives the process
// being killed (it is in the WAL file, in the OS's cache), and only a power
// loss can take back the last commits. Usage rows are worth that trade.
func sqliteDSN(path string, o Options, reader bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if reader {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	return path + "?" + q.Encode()
}

// openPostgres uses pgx through its database/sql adapter rather than
// pgxpool: then both drivers share every query and transaction of sqlStore,
// at the cost of a little speed that the console and the batched usage log
// do not notice.
func openPostgres(ctx context.Context, dsn string, o Options) (*sqlStore, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: postgres dsn: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxConns)
	db.SetConnMaxLifetime(30 * time.Minute) // follow a failover or a DNS change eventually
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: cannot connect to postgres: %w", err)
	}
	return &sqlStore{d: postgresDialect, w: db, r: db}, nil
}
