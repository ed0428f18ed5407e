package param

import (
	"slices"
	"strings"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// The settings that OpenAI's chat completions and Responses requests spell
// alike, read into the canonical model the same way.

// AddDropped appends name to list unless it is there already.
func AddDropped(list []string, name string) []string {
	if slices.Contains(list, name) {
		return list
	}
	return append(list, name)
}

// MaxTokens reads an output token limit, 0 when absent; below 1 is a 400.
func MaxTokens(v []byte, name string) (int, *codec.Error) {
	n, ok, err := Int(v, name)
	if err == nil && ok && n < 1 {
		err = Invalid(name, "Invalid '"+name+"': integer below minimum value. Expected a value >= 1.")
	}
	return int(n), err
}

// Effort reads a reasoning effort into th: "none" asks for no reasoning,
// the levels for reasoning at that level.
func Effort(e, name string, th *codec.Thinking) *codec.Error {
	switch e {
	case "":
	case "none":
		th.Effort = e
	case "minimal", "low", "medium", "high", "xhigh", "max":
		th.Enabled, th.Effort = true, e
	default:
		return Invalid(name, "Invalid value: '"+e+"'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh' and 'max'.")
	}
	return nil
}

// ToolMode reads tool_choice as a string into c.
func ToolMode(s string, c *codec.ToolChoice) *codec.Error {
	switch s {
	case "auto":
		c.Mode = codec.ToolAuto
	case "none":
		c.Mode = codec.ToolNone
	case "required":
		c.Mode = codec.ToolRequired
	default:
		return Invalid("tool_choice", "Invalid value: '"+s+"'. Supported values are: 'none', 'auto' and 'required'.")
	}
	return nil
}

// ImageURL reads an image given by URL into cp: a base64 data URL as its
// media type and data, an http(s) URL as it is; ok is false for another.
func ImageURL(u string, cp *codec.Part) (ok bool) {
	if mt, data, ok := rawjson.ParseDataURL(u); ok && data != "" {
		cp.MediaType, cp.Data = mt, data
		return true
	}
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		cp.URL = u
		return true
	}
	return false
}

// Arguments returns a tool call's arguments, "{}" for none.
func Arguments(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

// Function is a function tool as both APIs describe it.
type Function struct {
	Name, Description  string
	Parameters, Strict []byte
}

// Tool reads f into a canonical tool; where names the member f was read
// from ("tools[0].function"), built only for an error.
func (f *Function) Tool(where func() string) (codec.Tool, *codec.Error) {
	if f.Name == "" {
		return codec.Tool{}, Invalid(where()+".name", "Missing required parameter: '"+where()+".name'.")
	}
	strict, err := Bool(f.Strict, "")
	if err != nil {
		return codec.Tool{}, Invalid(where()+".strict", "'strict' must be a boolean")
	}
	t := codec.Tool{Name: f.Name, Description: f.Description, Strict: strict}
	switch rawjson.KindOf(f.Parameters) {
	case rawjson.KindInvalid, rawjson.KindNull:
	case rawjson.KindObject:
		t.Parameters = rawjson.UnsafeString(f.Parameters)
	default:
		return t, Invalid(where()+".parameters", "'parameters' must be an object")
	}
	return t, nil
}

// SchemaFormat reads a json_schema output format (name, schema, strict)
// into rf; prefix names its members ("response_format.json_schema.").
func SchemaFormat(name string, schema, strict []byte, prefix string, rf *codec.ResponseFormat) *codec.Error {
	if rawjson.KindOf(schema) != rawjson.KindObject {
		return Invalid(prefix+"schema", "'"+prefix+"schema' must be an object")
	}
	s, err := Bool(strict, prefix+"strict")
	if err != nil {
		return err
	}
	rf.Kind, rf.Name, rf.Schema, rf.Strict = codec.FormatJSONSchema, name, rawjson.UnsafeString(schema), s
	return nil
}
