package store

// The contract suite: one list of tests, run against every driver, each
// test on a fresh database. SQLite gets a file in a temporary directory;
// PostgreSQL gets a new database on a throwaway server the suite starts
// (internal/pgtest), which is skipped with a message when the server is
// not installed, and fails instead when CI=true.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/internal/pgtest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		killChildMain() // never returns
	}
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// backend makes fresh, empty databases for one driver.
type backend struct {
	driver string
	newDSN func(t *testing.T) string
}

var backends = []backend{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "rosetta.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.NewDatabase(t) }},
}

// contractTests is the suite. Each test gets a fixture on its own database.
var contractTests = []struct {
	name string
	fn   func(*testing.T, *fixture)
}{
	{"Users", testUsers},
	{"DeleteUserCascades", testDeleteUserCascades},
	{"Sessions", testSessions},
	{"Keys", testKeys},
	{"Channels", testChannels},
	{"ChannelKeysSealed", testChannelKeysSealed},
	{"UsageFilter", testUsageFilter},
	{"UsagePaging", testUsagePaging},
	{"UsageBuckets", testUsageBuckets},
	{"Spend", testSpend},
	{"AddUsageTouchesKeys", testAddUsageTouchesKeys},
	{"DeleteUsageBefore", testDeleteUsageBefore},
	{"UsageRanges", testUsageRanges},
	{"UsageSparseKey", testUsageSparseKey},
	{"UsageMigration", testUsageMigration},
	{"UsageEndpointMigration", testUsageEndpointMigration},
	{"UsageUnitsMigration", testUsageUnitsMigration},
	{"UsageAttempts", testUsageAttempts},
	{"DeleteUsageAttempts", testDeleteUsageAttempts},
	{"UsageLatency", testUsageLatency},
	{"DisabledOwner", testDisabledOwner},
	{"KeyChanges", testKeyChanges},
	{"ConcurrentWriters", testConcurrentWriters},
	{"Migrations", testMigrations},
	{"ConcurrentOpen", testConcurrentOpen},
	{"KilledProcessKeepsCommits", testKilledProcess},
	{"UsageWriter", testUsageWriterStore},
	{"UsageWriterBurst", testUsageWriterBurst},
	{"Responses", testResponses},
	{"DeleteResponsesBefore", testDeleteResponsesBefore},
	{"KeyModelLimits", testKeyModelLimits},
	{"ChannelLimits", testChannelLimits},
	{"LimitsMigration", testLimitsMigration},
}

// TestStore runs the contract suite against every driver.
func TestStore(t *testing.T) {
	for _, b := range backends {
		t.Run(b.driver, func(t *testing.T) {
			t.Parallel()
			for _, c := range contractTests {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.fn(t, newFixture(t, b))
				})
			}
		})
	}
}

// fixture is one test's database and an open store on it.
type fixture struct {
	backend
	dsn    string
	secret []byte
	s      Store
	ctx    context.Context
}

func newFixture(t *testing.T, b backend) *fixture {
	f := &fixture{backend: b, dsn: b.newDSN(t), secret: randomKey(t), ctx: t.Context()}
	f.s = f.open(t, Options{SecretKey: f.secret})
	return f
}

// open opens another store on the fixture's database, closed at cleanup.
func (f *fixture) open(t *testing.T, o Options) Store {
	t.Helper()
	s, err := Open(f.ctx, f.driver, f.dsn, o)
	if err != nil {
		t.Fatalf("open %s: %v", f.driver, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// raw is the store's own connection pool, for checks that look beneath the
// interface (the bytes of a sealed column, a row count).
func (f *fixture) raw() *sql.DB { return f.s.(*sqlStore).r }

func (f *fixture) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := f.raw().QueryRowContext(f.ctx, query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func (f *fixture) user(t *testing.T, name string) *User {
	t.Helper()
	u := &User{Name: name, PasswordHash: "$argon2id$x", Role: RoleUser}
	must(t, f.s.CreateUser(f.ctx, u))
	return u
}

func (f *fixture) key(t *testing.T, owner int64, name string) *Key {
	t.Helper()
	k := &Key{Name: name, OwnerID: owner, Hash: sha256.Sum256([]byte(name + fmt.Sprint(owner))),
		Prefix: "sk-rst-" + name, Models: []string{"*"}, Enabled: true}
	must(t, f.s.CreateKey(f.ctx, k))
	return k
}

func randomKey(t *testing.T) []byte {
	k := make([]byte, SecretKeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantErr fails unless err is target.
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

func wantEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// at is a fixed instant plus d, in the form the store returns times.
func at(d time.Duration) time.Time {
	return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Add(d)
}
