//go:build race

package store

// burstRows is smaller under the race detector, which makes the pure-Go
// SQLite several times slower.
const burstRows = 10_000
