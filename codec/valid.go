package codec

import (
	"errors"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// Valid reports whether b is one whole JSON value, strings and all: it
// accepts exactly what encoding/json.Valid accepts (rawjson.Valid). The
// pass-through path checks each upstream body and stream event with it
// before relaying it, so that garbage from an upstream is reported as the
// upstream's failure, not handed to the client's parser.
func Valid(b []byte) bool { return rawjson.Valid(b) }

// ErrNotJSON is the error of an upstream stream event that is not JSON.
var ErrNotJSON = errors.New("the upstream sent a stream event that is not JSON")
