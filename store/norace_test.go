//go:build !race

package store

// burstRows is the number of rows testUsageWriterBurst records.
const burstRows = 50_000
