package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// addTypeErrors adds the decoder's type errors for the document data. They
// give only a line ("line 7: cannot unmarshal ..."), so the line is looked
// up in the document to name the field: "channels[0].weight: cannot
// unmarshal ... (line 7)".
func (p *problems) addTypeErrors(data []byte, msgs []string) {
	lines := map[int][]lineEntry{}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) == nil {
		indexLines(&root, "", lines)
	}
	for _, msg := range msgs {
		path, problem := locate(msg, lines)
		p.add(path, "%s", problem)
	}
}

// A lineEntry is a mapping key or sequence item that starts on a line.
type lineEntry struct {
	path string
	key  string    // "" for a sequence item
	kind yaml.Kind // of the value
}

// indexLines records the field path of every key and item under n by the
// line it is on, outermost first.
func indexLines(n *yaml.Node, path string, lines map[int][]lineEntry) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			indexLines(c, path, lines)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := field(path, k.Value)
			lines[k.Line] = append(lines[k.Line], lineEntry{p, k.Value, v.Kind})
			if v.Line != k.Line {
				lines[v.Line] = append(lines[v.Line], lineEntry{p, "", v.Kind})
			}
			indexLines(v, p, lines)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			lines[c.Line] = append(lines[c.Line], lineEntry{p, "", c.Kind})
			indexLines(c, p, lines)
		}
	}
}

// locate splits the decoder's "line N: problem" into a field path and
// "problem (line N)". For "field x not found in type T" the path is the key
// x on that line. Otherwise it is the innermost field on the line whose
// value has the kind the problem names ("cannot unmarshal !!map ...", else
// a scalar), if the others of that kind are its parents: on a flow-style
// line such as "{name: a, weight: x}" the line alone cannot tell which
// scalar failed, and the path is "" rather than a guess.
func locate(msg string, lines map[int][]lineEntry) (path, problem string) {
	var line int
	if _, err := fmt.Sscanf(msg, "line %d:", &line); err != nil {
		return "", msg
	}
	_, problem, _ = strings.Cut(msg, ": ")
	if rest, ok := strings.CutPrefix(problem, "field "); ok {
		if key, _, ok := strings.Cut(rest, " not found in type "); ok {
			for _, e := range lines[line] {
				if e.key == key {
					return e.path, fmt.Sprintf("unknown field (line %d)", line)
				}
			}
		}
	}
	kind := yaml.ScalarNode
	if strings.Contains(problem, "unmarshal !!map ") {
		kind = yaml.MappingNode
	} else if strings.Contains(problem, "unmarshal !!seq ") {
		kind = yaml.SequenceNode
	}
	var paths []string
	for _, e := range lines[line] {
		if e.kind == kind {
			paths = append(paths, e.path)
		}
	}
	if len(paths) == 0 {
		return "", msg
	}
	path = paths[len(paths)-1]
	for _, p := range paths {
		if !strings.HasPrefix(path, p) {
			return "", msg // siblings on a flow-style line
		}
	}
	return path, fmt.Sprintf("%s (line %d)", problem, line)
}
