package cjson

import (
	"fmt"
	"strconv"
)

// A Node is a value of a decoded document and where it stands in it: its
// path, in the notation a parser's errors name a field by (members joined
// by ".", elements as "[i]": "log.entries[3].proof[0]"; "" is the whole
// document).
//
// It is the tree walk the events package's reference parser and the
// verifier's evidence parser share. Each of them keeps its own rules (the
// events parser wants exactly the members of an event, the verifier ignores
// members it does not know) and its own words for what is wrong; the walk
// keeps where they are.
type Node struct {
	Path  string
	Value any
}

// Root returns the node of a whole document.
func Root(v any) Node { return Node{Value: v} }

// Field returns the path of member key of n.
func (n Node) Field(key string) string {
	if n.Path == "" {
		return key
	}
	return n.Path + "." + key
}

// Member returns member key of n and whether n is an object that has it.
// The node's path is n's and key's either way, so that a parser can say
// where a missing member was wanted.
func (n Node) Member(key string) (Node, bool) {
	o, _ := n.Value.(Object)
	v, ok := o.Get(key)
	return Node{n.Field(key), v}, ok
}

// Elem returns element i of a, an array at n.
func (n Node) Elem(a []any, i int) Node {
	return Node{n.Path + "[" + strconv.Itoa(i) + "]", a[i]}
}

// Object returns n's value if it is an object.
func (n Node) Object() (Object, bool) {
	o, ok := n.Value.(Object)
	return o, ok
}

// Array returns n's value if it is an array.
func (n Node) Array() ([]any, bool) {
	a, ok := n.Value.([]any)
	return a, ok
}

// Str returns n's value if it is a string.
func (n Node) Str() (string, bool) {
	s, ok := n.Value.(string)
	return s, ok
}

// Int returns n's value if it is an integer.
func (n Node) Int() (int64, bool) {
	i, ok := n.Value.(int64)
	return i, ok
}

// Kind names the JSON type of n's value with its article, for errors: "a
// string", "an array", "null".
func (n Node) Kind() string {
	switch n.Value.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case string:
		return "a string"
	case []any:
		return "an array"
	case Object:
		return "an object"
	}
	return fmt.Sprintf("%T", n.Value)
}
