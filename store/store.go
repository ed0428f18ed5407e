// Package store keeps the gateway's persistent state behind one interface:
// users and their console sessions, API keys, channels made in the console,
// and the usage log. SQLite (embedded, the default) and PostgreSQL (several
// nodes sharing state) implement it, and one contract suite tests both.
//
// The request path never reads the store directly: keys and channels are
// served from caches that the console invalidates on change, and usage rows
// reach the store in asynchronous batches (UsageWriter). The store knows
// nothing of HTTP.
//
// One implementation serves both databases through database/sql: the SQL is
// written once, with $N placeholders both drivers accept, and a small
// dialect holds what differs (error codes, the migration lock); the schema
// is per driver (migrations/sqlite, migrations/postgres), applied by Open.
// Times are stored as Unix nanoseconds in integer columns so bucketing and
// comparisons are the same integer arithmetic in both.
//
// SQLite (modernc.org/sqlite, pure Go) runs in WAL mode: readers do not
// block the writer nor each other, and synchronous=NORMAL makes a commit
// durable against a killed process (not a power cut) without an fsync per
// commit. SQLite admits one writer at a time, and with several writing
// connections in one process a transaction can fail at once with
// SQLITE_BUSY (a read lock cannot become a write lock once another commit
// moved the WAL on) while the rest poll in busy_timeout's sleep loop. So
// the store writes through a single connection, whose transactions begin
// IMMEDIATE, and reads through a pool of read-only connections;
// busy_timeout is left for other processes sharing the file.
//
// PostgreSQL goes through pgx's database/sql adapter; migrations take an
// advisory lock so several nodes starting at once apply each one once.
//
// Channel API keys are sealed with AES-256-GCM (Sealer) under a key from
// ROSETTA_SECRET_KEY, or for SQLite from a key file next to the database
// (LoadSecretKey).
package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"
)

// Errors every implementation returns, so callers can tell them apart with
// errors.Is whatever the driver.
var (
	ErrNotFound = errors.New("store: not found")
	ErrConflict = errors.New("store: already exists") // a unique name or hash is taken
)

// Role is what a user may do in the console.
type Role string

const (
	RoleAdmin Role = "admin" // sees every key, manages users and channels
	RoleUser  Role = "user"  // sees and manages its own keys
)

// User is a console account.
type User struct {
	ID           int64
	Name         string // unique login name
	PasswordHash string // argon2id or bcrypt in its own encoded form; never the password
	Role         Role
	Disabled     bool
	Created      time.Time
}

// Session is a console login. Only the SHA-256 hash of the cookie value is
// stored, so a copy of the database does not log anyone in.
type Session struct {
	Hash    [sha256.Size]byte
	UserID  int64
	CSRF    string // the token state-changing calls must echo
	Created time.Time
	Expires time.Time
}

// Key is an API key issued by the console. The secret is shown once at
// creation and never stored: only its SHA-256 hash and a display prefix.
type Key struct {
	ID      int64
	Name    string
	OwnerID int64             // 0: no console user owns it (made by an admin command)
	Hash    [sha256.Size]byte // unique
	Prefix  string            // the first characters of the secret, for display ("sk-rst-ab12")
	Models  []string          // allow-list: exact names, "*", or prefixes ending in "*"
	RPM     int64             // 0 = unlimited
	TPM     int64
	// ModelLimits are the key's limits on one public model, by name,
	// beside RPM and TPM; nil: none.
	ModelLimits map[string]Limits
	Expires     time.Time // zero = never
	Enabled     bool      // false once revoked
	Created     time.Time
	LastUsed    time.Time // zero = never; updated in batches, so it lags by seconds
	// OwnerDisabled is read from the owner's account, never written with
	// the key: a disabled user's keys are not usable.
	OwnerDisabled bool
}

// Usable reports whether the key may authenticate at now.
func (k *Key) Usable(now time.Time) bool {
	return k.Enabled && !k.OwnerDisabled && (k.Expires.IsZero() || now.Before(k.Expires))
}

// Channel is an upstream made in the console. Its fields mean what the
// configuration file's channel fields mean. APIKeys are plain text here and
// encrypted at rest by the implementation (see Sealer).
type Channel struct {
	ID         int64
	Name       string // unique, and distinct from the configuration's channels
	Type       string // openai | anthropic | gemini | demo
	BaseURL    string
	APIKeys    []string
	Models     []string
	ModelMap   map[string]string
	Priority   int
	Weight     int
	APIVersion string
	Timeouts   Timeouts
	// RPM and TPM are the upstream's quota for the whole fleet; 0 =
	// unlimited.
	RPM, TPM int64
	Enabled  bool
	Created  time.Time
	Updated  time.Time
	// KeysErr is set, wrapping ErrSecretKey, when the stored API keys
	// cannot be opened (another secret key, none, or a tampered value);
	// APIKeys is then nil. The rest of the channel reads fine, so it can
	// be listed, given its keys again, or deleted. UpdateChannel refuses
	// a channel with KeysErr set: clear it when setting APIKeys anew.
	KeysErr error
}

// Limits are requests and tokens per minute; 0 = unlimited.
type Limits struct {
	RPM int64 `json:"rpm,omitempty"`
	TPM int64 `json:"tpm,omitempty"`
}

// Timeouts of a channel; zero means the gateway default.
type Timeouts struct {
	Connect, FirstByte, Idle, Total time.Duration
}

// Usage is one row of the usage log: one request through the gateway.
type Usage struct {
	ID          int64 // set by the store
	Time        time.Time
	KeyID       int64  // 0 for a key of the configuration file
	KeyName     string // kept so a row stays readable after its key is deleted
	Model       string // public model name
	Channel     string
	Status      int
	Input       int64
	Output      int64
	Cached      int64
	Reasoning   int64
	Latency     time.Duration // the whole request
	FirstToken  time.Duration // time to first byte of the reply; 0 when none
	RequestID   string
	ClientStyle string // openai | anthropic | gemini
	// Endpoint is the API the request was made to, whatever its style:
	// chat, completions, embeddings, rerank, images.generations,
	// images.edits, images.variations, audio.speech, audio.transcriptions,
	// audio.translations, realtime, responses. "" for rows written before
	// it was kept.
	Endpoint string
	// Units is what the request used in a measure other than tokens, by
	// which its endpoint is billed: Unit says which (UnitCharacters,
	// UnitSeconds, UnitSearchUnits, UnitImages); 0 and "" when none is
	// known.
	Units int64
	Unit  string
	// Attempts are the request's upstream attempts, in the order tried,
	// when one of them failed; nil for the others (most requests), which
	// then cost nothing more to write.
	Attempts []Attempt
}

// Attempt is one upstream attempt of a request.
type Attempt struct {
	Channel string
	// Status is what the attempt ended with as the client would see it:
	// the upstream's status, or the gateway's 502/504 when none came.
	Status int
	// Error is why it failed, in words ("connection refused to
	// 127.0.0.1:1", "HTTP 503: overloaded"); empty when it answered.
	// The store keeps its first MaxAttemptError bytes.
	Error string
	// Duration is how long the attempt took: from the end of the attempt
	// before it (the first: from the request's start, so the gateway's
	// own work of reading and routing it is in) until it failed, or, for
	// the one that answered, until the request ended.
	Duration time.Duration
}

// MaxAttemptError bounds the error text kept of an attempt: an upstream's
// message can be long, and a few hundred bytes say why it failed.
const MaxAttemptError = 1024

// The units of Usage.Unit.
const (
	UnitCharacters  = "characters"   // of the text of a speech request
	UnitSeconds     = "seconds"      // of transcribed or translated audio, as the upstream reports them
	UnitSearchUnits = "search_units" // Cohere's rerank billing
	UnitImages      = "images"       // images asked for
)

// UsageFilter selects usage rows. Zero fields do not filter.
type UsageFilter struct {
	From, To time.Time // From inclusive, To exclusive
	// KeyIDs: rows of any of these keys (a user's own keys). Empty does
	// not filter: a caller scoping to a user who has no keys must not ask.
	KeyIDs   []int64
	Model    string
	Channel  string
	Status   int
	Endpoint string
	// ByEndpoint makes UsageBuckets group by endpoint too.
	ByEndpoint bool
	Limit      int   // rows to return, newest first; 0 = 100, at most 10000
	BeforeID   int64 // paging: only rows with a smaller ID
}

// UsageBucket sums the usage rows of one time bucket, one key and one model
// (and one endpoint, when the filter groups by it).
type UsageBucket struct {
	Start                  time.Time
	KeyID                  int64
	Model                  string
	Endpoint               string // "" unless the filter's ByEndpoint
	Units                  int64  // summed, with the endpoint's Unit, when the filter is ByEndpoint
	Unit                   string
	Requests               int64
	Errors                 int64 // status >= 400
	Input                  int64
	Output                 int64
	Cached                 int64
	Reasoning              int64
	LatencyP50, LatencyP99 time.Duration
}

// Spend is a key's usage totals.
type Spend struct {
	Requests, Input, Output int64
}

// Store is the gateway's persistent state. Every method is safe for
// concurrent use. Lookups of a missing row return ErrNotFound; inserts of a
// taken unique value return ErrConflict.
type Store interface {
	CreateUser(ctx context.Context, u *User) error // sets ID and Created
	User(ctx context.Context, id int64) (*User, error)
	UserByName(ctx context.Context, name string) (*User, error)
	Users(ctx context.Context) ([]User, error)
	UpdateUser(ctx context.Context, u *User) error // name, password hash, role, disabled
	// SetPassword changes only the password hash, so that a user changing
	// their password cannot undo an admin's change made meanwhile.
	SetPassword(ctx context.Context, id int64, hash string) error
	DeleteUser(ctx context.Context, id int64) error // its keys and sessions go with it

	CreateSession(ctx context.Context, s *Session) error
	Session(ctx context.Context, hash [sha256.Size]byte) (*Session, error) // expired sessions are not found
	DeleteSession(ctx context.Context, hash [sha256.Size]byte) error
	DeleteUserSessions(ctx context.Context, userID int64) error

	CreateKey(ctx context.Context, k *Key) error // sets ID and Created
	Key(ctx context.Context, id int64) (*Key, error)
	KeyByHash(ctx context.Context, hash [sha256.Size]byte) (*Key, error)
	Keys(ctx context.Context, ownerID int64) ([]Key, error) // ownerID 0: every key
	// UpdateKey saves name, models, limits and expiry, and revokes the key
	// when k.Enabled is false; a revoked key stays revoked (k.Enabled is
	// set to the stored value).
	UpdateKey(ctx context.Context, k *Key) error
	DeleteKey(ctx context.Context, id int64) error
	TouchKeys(ctx context.Context, lastUsed map[int64]time.Time) error // only moves LastUsed forward
	// KeyChanges lists, oldest first and at most limit of them, the hashes
	// of keys changed after the change numbered after (an edit, a revoke,
	// a delete, their owner updated or deleted), with the number of the
	// last one listed: the next call's after. With after < 0 it lists
	// none and returns the latest number, where a new reader starts.
	// Every node polls it to drop changed keys from its cache.
	KeyChanges(ctx context.Context, after int64, limit int) (hashes [][sha256.Size]byte, last int64, err error)

	CreateChannel(ctx context.Context, c *Channel) error // sets ID, Created and Updated
	Channel(ctx context.Context, id int64) (*Channel, error)
	Channels(ctx context.Context) ([]Channel, error)
	UpdateChannel(ctx context.Context, c *Channel) error
	DeleteChannel(ctx context.Context, id int64) error

	// AddUsage writes the rows in one transaction, which also moves
	// their keys' LastUsed forward to their latest row's time; the rows'
	// IDs are not set.
	AddUsage(ctx context.Context, rows []Usage) error
	Usage(ctx context.Context, f UsageFilter) ([]Usage, error)
	// UsageBuckets groups by bucket (starting at multiples of width since
	// the Unix epoch), key and model, and endpoint with f.ByEndpoint;
	// Limit and BeforeID do not apply.
	UsageBuckets(ctx context.Context, f UsageFilter, width time.Duration) ([]UsageBucket, error)
	// UsageLatency ranks the filtered rows' latencies per endpoint (p50
	// and p95, exact); with more than max rows it ranks none and returns
	// ErrTooManyRows. Limit and BeforeID do not apply.
	UsageLatency(ctx context.Context, f UsageFilter, max int) ([]EndpointLatency, error)
	Spend(ctx context.Context, keyIDs []int64) (map[int64]Spend, error) // empty keyIDs: every key with usage
	// DeleteUsageBefore deletes the rows older than t, in small
	// transactions so writers are not held up, and returns how many.
	DeleteUsageBefore(ctx context.Context, t time.Time) (int64, error)

	// PutResponses writes Responses API responses in one transaction: a
	// new id is added, one already there under the same key gets the
	// new status and the items and usage that are set (one under another
	// key is left as it is).
	PutResponses(ctx context.Context, list []Response) error
	Response(ctx context.Context, id string) (*Response, error)
	DeleteResponse(ctx context.Context, id string) error
	// DeleteResponsesBefore deletes the responses made before t, in small
	// transactions, and returns how many. (A key's responses are deleted
	// with it, by DeleteKey and DeleteUser.)
	DeleteResponsesBefore(ctx context.Context, t time.Time) (int64, error)

	Ping(ctx context.Context) error // for /readyz
	Close() error
}
