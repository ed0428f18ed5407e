package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ByteSize is a number of bytes. In YAML it is a plain integer (1048576) or
// an integer with a unit: B, binary KiB, MiB, GiB, TiB or decimal KB, MB,
// GB, TB ("512KiB", "32MiB", "10MB"). Units are case-insensitive.
type ByteSize int64

// sizeUnits is in the order String tries them.
var sizeUnits = []struct {
	name string
	n    int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
	{"B", 1},
}

// String formats s with the largest unit that divides it exactly ("32MiB",
// "10MB", "100B"). Parsing the result gives s back.
func (s ByteSize) String() string {
	u := sizeUnits[len(sizeUnits)-1] // B
	for _, v := range sizeUnits {
		if s != 0 && int64(s)%v.n == 0 {
			u = v
			break
		}
	}
	return strconv.FormatInt(int64(s)/u.n, 10) + u.name
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (s *ByteSize) UnmarshalYAML(n *yaml.Node) error {
	// A TypeError keeps the line number and lets decoding go on.
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{
			fmt.Sprintf("line %d: cannot unmarshal %s into a size (use e.g. 32MiB)", n.Line, n.ShortTag()),
		}}
	}
	v, ok := parseSize(n.Value)
	if !ok {
		return &yaml.TypeError{Errors: []string{
			fmt.Sprintf("line %d: %q is not a size (use e.g. 32MiB)", n.Line, n.Value),
		}}
	}
	*s = v
	return nil
}

// parseSize parses a non-negative integer with an optional unit.
func parseSize(s string) (ByteSize, bool) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i < 0 {
		i = len(s)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	unit := strings.TrimSpace(s[i:])
	if unit == "" {
		return ByteSize(n), true
	}
	for _, u := range sizeUnits {
		if strings.EqualFold(unit, u.name) {
			if n > math.MaxInt64/u.n {
				return 0, false
			}
			return ByteSize(n * u.n), true
		}
	}
	return 0, false
}
