package param

import (
	"sync"

	"github.com/rosetta-gateway/rosetta/codec"
)

// Wire is a style's request as sonic reads it, from a pool: Reset empties
// it for the pool, keeping the capacity it has grown.
type Wire interface{ Reset() }

// Decoder is the state of one request's decoding that the styles'
// decoders share: the wire request W as sonic read it, the canonical
// request R it fills, the names of the members it Dropped, and ToolMsg,
// the index in R.Messages of the message collecting consecutive tool
// results (-1: none).
type Decoder[W any] struct {
	W       W
	R       *codec.Request
	Dropped []string
	ToolMsg int
}

// Drop names a member that the canonical model has no place for, once.
func (d *Decoder[W]) Drop(name string) { d.Dropped = AddDropped(d.Dropped, name) }

// AddToolResult adds a tool result to the user turn of results under way
// (ToolMsg), else to a new one: consecutive results make one turn.
func (d *Decoder[W]) AddToolResult(id, name string, content []codec.Part) {
	var msg *codec.Message
	if d.ToolMsg >= 0 {
		msg = &d.R.Messages[d.ToolMsg]
	} else {
		msg = d.R.AddMessage(codec.RoleUser)
		d.ToolMsg = len(d.R.Messages) - 1
	}
	msg.Parts = append(msg.Parts, codec.Part{Kind: codec.PartToolResult, ID: id, Name: name, Content: content})
}

// Member is a request member as sonic left it raw, and its name.
type Member struct {
	Name  string
	Value []byte
}

// DropPresent drops each of members that the request sets (present and
// not null).
func (d *Decoder[W]) DropPresent(members ...Member) {
	for _, m := range members {
		if !Absent(m.Value) {
			d.Drop(m.Name)
		}
	}
}

// Decode is the frame of the OpenAI-family request decoders (chat
// completions, Responses): it resets r, takes a wire request from pool,
// reads body into it (Unmarshal, checked as there) and has decode map it
// into r, appending to dropped what it ignores; the wire request goes
// back to the pool emptied. A body that does not read is BodyError's 400.
func Decode[W Wire](body []byte, r *codec.Request, dropped []string, checked bool, pool *sync.Pool,
	decode func(d Decoder[W]) ([]string, *codec.Error)) ([]string, *codec.Error) {
	return DecodeWith(body, r, dropped, pool, func(w W, body []byte) *codec.Error {
		if Unmarshal(body, w, checked) != nil {
			return BodyError(body)
		}
		return nil
	}, decode)
}

// DecodeWith is Decode with read in place of Unmarshal: it reads body into
// w, or says why it cannot. decode gets the Decoder by value: a pointer
// passed to a function value would escape, an allocation per request.
func DecodeWith[W Wire](body []byte, r *codec.Request, dropped []string, pool *sync.Pool,
	read func(w W, body []byte) *codec.Error, decode func(d Decoder[W]) ([]string, *codec.Error)) ([]string, *codec.Error) {
	r.Reset()
	w := pool.Get().(W)
	defer func() {
		w.Reset()
		pool.Put(w)
	}()
	if err := read(w, body); err != nil {
		return dropped, err
	}
	return decode(Decoder[W]{W: w, R: r, Dropped: dropped, ToolMsg: -1})
}
