package cjson

import "testing"

// TestNode walks a document: each member and element carries its path, a
// member that is missing or asked of a non-object is absent but still
// says where it was wanted, and Kind names every type.
func TestNode(t *testing.T) {
	v, err := Decode([]byte(`{"log":{"entries":[{"proof":[3,"x"]}]},"n":1,"s":"a","z":null}`))
	if err != nil {
		t.Fatal(err)
	}
	root := Root(v)
	log, ok := root.Member("log")
	if !ok || log.Path != "log" {
		t.Fatalf("log: %v %+v", ok, log)
	}
	entries, _ := log.Member("entries")
	a, ok := entries.Array()
	if !ok || len(a) != 1 {
		t.Fatalf("entries: %v %v", ok, a)
	}
	e := entries.Elem(a, 0)
	proof, ok := e.Member("proof")
	pa, _ := proof.Array()
	if !ok || proof.Path != "log.entries[0].proof" || len(pa) != 2 {
		t.Fatalf("proof: %v %+v", ok, proof)
	}
	if p1 := proof.Elem(pa, 1); p1.Path != "log.entries[0].proof[1]" || p1.Kind() != "a string" {
		t.Errorf("proof[1]: %+v %s", p1, p1.Kind())
	}
	if i, ok := proof.Elem(pa, 0).Int(); !ok || i != 3 {
		t.Errorf("proof[0].Int() = %d, %v", i, ok)
	}
	if m, ok := root.Member("missing"); ok || m.Path != "missing" || m.Value != nil {
		t.Errorf("missing member: %v %+v", ok, m)
	}
	n, _ := root.Member("n")
	if m, ok := n.Member("x"); ok || m.Path != "n.x" {
		t.Errorf("member of an integer: %v %+v", ok, m)
	}
	if _, ok := n.Str(); ok {
		t.Error("an integer is a string")
	}
	if s, ok := root.Member("s"); !ok || s.Kind() != "a string" {
		t.Errorf("s: %+v", s)
	}
	for _, c := range []struct {
		v    any
		want string
	}{{nil, "null"}, {true, "a boolean"}, {int64(1), "an integer"}, {"", "a string"}, {[]any{}, "an array"}, {Object{}, "an object"}} {
		if got := Root(c.v).Kind(); got != c.want {
			t.Errorf("Kind(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
	if root.Field("k") != "k" || log.Field("k") != "log.k" {
		t.Errorf("Field: %q %q", root.Field("k"), log.Field("k"))
	}
}
