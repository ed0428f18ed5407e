//go:build !amd64 || purego

package rawjson

// vectorEqual is false: Equal compares as strings.
var vectorEqual = false

func equalVector(a, b []byte) bool { return string(a) == string(b) }
