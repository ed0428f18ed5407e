package rawjson

// BothWays is bothWays for the package's external tests: the words path
// runs in `make test` too, on a machine with AVX2.
var BothWays = bothWays
