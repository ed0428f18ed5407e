package store

// Migrations are SQL files embedded in the binary, one directory per driver
// (migrations/sqlite, migrations/postgres), named NNNN_what.sql and applied
// in the order of NNNN. Each runs in its own transaction together with the
// row that records it in schema_migrations, so a migration is either wholly
// applied and recorded or not at all; Open re-checks the record inside the
// transaction, after taking the migration lock, so a second process opening
// the same database at the same moment waits and then skips it.

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// Both drivers accept this statement as written.
const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    BIGINT PRIMARY KEY,
	name       TEXT   NOT NULL,
	applied_ns BIGINT NOT NULL
)`

// migrations lists the driver's migrations in order.
func migrations(driver string) ([]migration, error) {
	dir := path.Join("migrations", driver)
	entries, err := migrationFS.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var list []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("BUG: migration %s/%s is not named NNNN_what.sql", dir, e.Name())
		}
		b, err := migrationFS.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		list = append(list, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].version < list[j].version })
	for i := 1; i < len(list); i++ {
		if list[i].version == list[i-1].version {
			return nil, fmt.Errorf("BUG: two migrations numbered %d in %s", list[i].version, dir)
		}
	}
	return list, nil
}

// migrate applies the migrations the database has not recorded yet.
func (s *sqlStore) migrate(ctx context.Context) error {
	list, err := migrations(s.d.name)
	if err != nil {
		return err
	}
	for _, m := range list {
		if err := s.applyMigration(ctx, m); err != nil {
			return fmt.Errorf("store: migration %s: %w", m.name, err)
		}
	}
	return nil
}

func (s *sqlStore) applyMigration(ctx context.Context, m migration) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.d.lockMigrations != "" {
		if _, err := tx.ExecContext(ctx, s.d.lockMigrations); err != nil {
			return err
		}
	}
	// Made under the lock: two concurrent CREATE TABLE IF NOT EXISTS can
	// both miss the table in PostgreSQL and one then fails.
	if _, err := tx.ExecContext(ctx, createMigrationsTable); err != nil {
		return err
	}
	var n int
	err = tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&n)
	if err != nil || n > 0 {
		return err
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if check := migrationChecks[s.d.name+"/"+m.name]; check != nil {
		if err := check(ctx, tx); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_ns) VALUES ($1, $2, $3)`,
		m.version, m.name, toNS(now()))
	if err != nil {
		return err
	}
	return tx.Commit()
}

// migrationChecks fail a migration, inside its transaction, when its SQL
// did not change what it must on this database (by driver/file name).
var migrationChecks = map[string]func(context.Context, *sql.Tx) error{
	"sqlite/0010_usage_rows_unchecked.sql": checkOneChanged(
		"usage_rows is not the table migration 0003 made (was it changed outside Rosetta?), so 0010 leaves it as it is"),
}

// checkOneChanged fails with msg unless the migration's last statement to
// change rows changed exactly one.
func checkOneChanged(msg string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT changes()`).Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return errors.New(msg)
		}
		return nil
	}
}
