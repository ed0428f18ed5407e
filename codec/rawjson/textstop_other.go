//go:build !amd64 || purego

package rawjson

// TextStopVector is false: TextStop's callers search on their own.
var TextStopVector = false

// TextStop is not used without TextStopVector.
func TextStop([]byte) int { return 0 }
