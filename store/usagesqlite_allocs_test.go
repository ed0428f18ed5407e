//go:build !race

package store

import (
	"fmt"
	"testing"
	"time"
)

// TestAddUsageAllocs: the virtual table gives SQLite a batch's values
// without boxing them, so a batch's allocations do not grow with its rows
// (they were 6 a row: every integer over 255 and the request id).
func TestAddUsageAllocs(t *testing.T) {
	f, s := sqliteFixture(t)
	rows := make([]Usage, 1000)
	for i := range rows {
		rows[i] = Usage{Time: at(time.Duration(i)), KeyID: 1, KeyName: "app", Model: "m", Channel: "c", Status: 200,
			Input: 1000 + int64(i), Output: 300 + int64(i), Latency: time.Second + time.Duration(i),
			FirstToken: time.Millisecond + time.Duration(i), RequestID: fmt.Sprintf("req_%024d", i), ClientStyle: "openai"}
	}
	must(t, s.AddUsage(f.ctx, rows)) // labels and statements made
	perRow := testing.AllocsPerRun(5, func() { must(t, s.AddUsage(f.ctx, rows)) }) / float64(len(rows))
	if perRow > 0.2 {
		t.Fatalf("%.2f allocations a row, want at most 0.2", perRow)
	}
}
