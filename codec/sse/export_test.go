package sse

// NextMixed is nextMixed, the framer of any mix of line endings that
// looks for them with IndexByte alone: the fuzzers hold Next, built on
// lineEnd, to it.
var NextMixed = nextMixed
