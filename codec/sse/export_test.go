package sse

// NextMixed is nextMixedScan, the framer of any mix of line endings that
// looks for them with IndexByte alone: the fuzzers hold Next, built on
// lineEnd, to it.
var NextMixed = nextMixedScan
