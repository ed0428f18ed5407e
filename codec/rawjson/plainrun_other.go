//go:build !amd64 || purego

package rawjson

// vectorRuns is false: longString searches as it does without plainRun. (A
// variable, so that tests turn it off on amd64 too.)
var vectorRuns = false

func plainRun([]byte) int { return 0 }
