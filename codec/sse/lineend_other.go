//go:build !amd64 || purego

package sse

// vectorLineEnd is false: lineEnd looks for each byte with IndexByte.
var vectorLineEnd = false

func lineEndVector([]byte) int { return -1 }
