package merkle

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Policy limits: C2SP tlog-policy recommends supporting at least 32 of each.
const (
	maxPolicySize  = 1 << 20
	maxPolicyItems = 256 // logs, witnesses and groups, each
)

// A Policy is a C2SP tlog-policy (https://c2sp.org/tlog-policy): the logs
// whose checkpoints are accepted and the quorum of witnesses that must have
// cosigned them, possibly in nested k-of-n groups. Log keys are Ed25519
// checkpoint keys (type 0x01) and witness keys cosignature/v1 keys (type
// 0x04); ML-DSA-44 witnesses are not supported. URLs on log lines are
// accepted and ignored; a witness's URL, its tlog-witness submission prefix,
// is kept for the log that asks it to cosign (WitnessURLs). A Policy is
// immutable and safe for concurrent use.
type Policy struct {
	logs        []note.Verifier
	witnesses   []*CosignatureVerifier
	witnessURLs []string    // parallel to witnesses; "" if the line has none
	quorum      *policyNode // nil: "quorum none"
}

// A policyNode is a witness or a group in the quorum rule.
type policyNode struct {
	witness *CosignatureVerifier // a witness; nil for a group
	k       int                  // a group is satisfied by k of its members
	members []*policyNode
}

// ParsePolicy parses a tlog-policy file. It follows the specification: lines
// of whitespace-separated items ("log", "witness", "group", "quorum"), empty
// lines and "#" comments; names defined before use, at most once, and not
// "none" except in the quorum line; no duplicate keys; exactly one quorum
// line; octets 0x09, 0x0A, 0x20–0x7E and 0x80–0xFF only. A missing final
// newline is tolerated. Any violation is an error wrapping ErrMalformed that
// names the line.
func ParsePolicy(text []byte) (*Policy, error) {
	if len(text) > maxPolicySize {
		return nil, fmt.Errorf("policy of %d bytes is larger than %d: %w", len(text), maxPolicySize, ErrMalformed)
	}
	p := &Policy{}
	names := map[string]*policyNode{}
	keys := map[string]bool{} // public keys seen, by type and bytes
	groups, haveQuorum := 0, false
	for num, line := range bytes.Split(text, []byte("\n")) {
		fail := func(format string, args ...any) error {
			return fmt.Errorf("policy line %d: %s: %w", num+1, fmt.Sprintf(format, args...), ErrMalformed)
		}
		for _, c := range line {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return nil, fail("control character %#02x", c)
			}
		}
		f := strings.FieldsFunc(string(line), func(r rune) bool { return r == ' ' || r == '\t' })
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "log":
			if len(f) < 2 || len(f) > 3 {
				return nil, fail("want log <vkey> [<url>]")
			}
			_, _, typ, pub, err := parseVerifierKey(f[1])
			if err != nil || typ != sigTypeEd25519 {
				return nil, fail("log key is not an Ed25519 verifier key")
			}
			v, err := NewVerifier(f[1])
			if err != nil {
				return nil, fail("log key: %s", err.Error())
			}
			if keys["log"+string(pub)] {
				return nil, fail("duplicate log key")
			}
			keys["log"+string(pub)] = true
			if len(p.logs) == maxPolicyItems {
				return nil, fail("more than %d logs", maxPolicyItems)
			}
			p.logs = append(p.logs, v)
		case "witness":
			if len(f) < 3 || len(f) > 4 {
				return nil, fail("want witness <name> <vkey> [<url>]")
			}
			if err := newName(names, f[1]); err != nil {
				return nil, fail("%s", err.Error())
			}
			w, err := NewCosignatureVerifier(f[2])
			if err != nil {
				return nil, fail("witness %q key: %s", f[1], err.Error())
			}
			if keys["witness"+string(w.key)] {
				return nil, fail("duplicate witness key")
			}
			keys["witness"+string(w.key)] = true
			if len(p.witnesses) == maxPolicyItems {
				return nil, fail("more than %d witnesses", maxPolicyItems)
			}
			p.witnesses = append(p.witnesses, w)
			url := ""
			if len(f) == 4 {
				url = f[3]
			}
			p.witnessURLs = append(p.witnessURLs, url)
			names[f[1]] = &policyNode{witness: w}
		case "group":
			if len(f) < 4 {
				return nil, fail("want group <name> all|any|<k> <name>...")
			}
			if err := newName(names, f[1]); err != nil {
				return nil, fail("%s", err.Error())
			}
			g := &policyNode{}
			seen := map[string]bool{}
			for _, m := range f[3:] {
				node, ok := names[m]
				if !ok {
					return nil, fail("group %q member %q is not defined above", f[1], m)
				}
				if seen[m] {
					return nil, fail("group %q lists %q twice", f[1], m)
				}
				seen[m] = true
				g.members = append(g.members, node)
			}
			switch n := len(g.members); f[2] {
			case "all":
				g.k = n
			case "any":
				g.k = 1
			default:
				k, ok := parseUint64(f[2])
				if !ok || k < 1 || k > uint64(n) {
					return nil, fail("group %q threshold %q is not all, any or a decimal from 1 to %d", f[1], f[2], n)
				}
				g.k = int(k)
			}
			if groups++; groups > maxPolicyItems {
				return nil, fail("more than %d groups", maxPolicyItems)
			}
			names[f[1]] = g
		case "quorum":
			if len(f) != 2 {
				return nil, fail("want quorum <name>")
			}
			if haveQuorum {
				return nil, fail("second quorum line")
			}
			haveQuorum = true
			if f[1] != "none" {
				node, ok := names[f[1]]
				if !ok {
					return nil, fail("quorum %q is not defined above", f[1])
				}
				p.quorum = node
			}
		default:
			return nil, fail("unknown keyword %q", truncate(f[0]))
		}
	}
	if !haveQuorum {
		return nil, fmt.Errorf("policy has no quorum line: %w", ErrMalformed)
	}
	return p, nil
}

// newName checks that name can be defined.
func newName(names map[string]*policyNode, name string) error {
	if name == "none" {
		return fmt.Errorf("the name none is reserved")
	}
	if _, ok := names[name]; ok {
		return fmt.Errorf("name %q is defined twice", truncate(name))
	}
	return nil
}

// Logs returns the verifiers of the policy's logs.
func (p *Policy) Logs() []note.Verifier { return append([]note.Verifier(nil), p.logs...) }

// Witnesses returns the verifiers of the policy's witnesses.
func (p *Policy) Witnesses() []*CosignatureVerifier {
	return append([]*CosignatureVerifier(nil), p.witnesses...)
}

// WitnessURLs returns the URL of each witness, in the order of Witnesses:
// the optional last item of its policy line, which C2SP tlog-policy
// recommends be the witness's tlog-witness submission prefix, or "" if the
// line has none.
func (p *Policy) WitnessURLs() []string { return append([]string(nil), p.witnessURLs...) }

// Open verifies a signed checkpoint against the policy: signed by one of its
// logs (the log key's name being the origin, as in Open) and cosigned by a
// quorum of its witnesses. It returns the checkpoint and the valid
// cosignatures. Errors wrap ErrSignature or ErrMalformed; a policy without
// logs cannot open anything (use Open with the log's key, then
// CheckWitnesses).
func (p *Policy) Open(msg []byte) (Checkpoint, []Cosignature, error) {
	if len(p.logs) == 0 {
		return Checkpoint{}, nil, fmt.Errorf("opening checkpoint: the policy lists no log: %w", ErrSignature)
	}
	n, err := openNote(msg, note.VerifierList(p.logs...))
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("opening checkpoint with the policy's %d logs: %w", len(p.logs), err)
	}
	c, err := ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return Checkpoint{}, nil, err
	}
	signedByOrigin := false
	for _, s := range n.Sigs {
		signedByOrigin = signedByOrigin || s.Name == c.Origin
	}
	if !signedByOrigin {
		return Checkpoint{}, nil, fmt.Errorf("checkpoint of origin %q is not signed by a policy log of that name: %w", truncate(c.Origin), ErrSignature)
	}
	cosigs, err := p.CheckWitnesses(msg)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	return c, cosigs, nil
}

// CheckWitnesses checks that a quorum of the policy's witnesses validly
// cosigned the signed checkpoint msg, and returns their cosignatures. It does
// not check the log's signature. A quorum not met is an error wrapping
// ErrSignature that says how many witnesses cosigned.
func (p *Policy) CheckWitnesses(msg []byte) ([]Cosignature, error) {
	cosigs, err := VerifyCosignatures(msg, p.witnesses)
	if err != nil {
		return nil, err
	}
	if p.quorum == nil {
		return cosigs, nil
	}
	signed := map[*CosignatureVerifier]bool{}
	for _, c := range cosigs {
		for _, w := range p.witnesses {
			if w.name == c.Name && w.id == c.KeyHash {
				signed[w] = true
			}
		}
	}
	if !p.quorum.satisfied(signed) {
		return nil, fmt.Errorf("witness quorum not met: %d of the %d in the policy's list of witnesses cosigned: %w", len(signed), len(p.witnesses), ErrSignature)
	}
	return cosigs, nil
}

// satisfied reports whether the node is witnessed given who cosigned.
func (n *policyNode) satisfied(signed map[*CosignatureVerifier]bool) bool {
	if n.witness != nil {
		return signed[n.witness]
	}
	k := 0
	for _, m := range n.members {
		if m.satisfied(signed) {
			k++
		}
	}
	return k >= n.k
}

// String returns a summary of the policy for logs and errors.
func (p *Policy) String() string {
	q := "none"
	if p.quorum != nil {
		q = strconv.Itoa(p.quorum.k) + "-of-" + strconv.Itoa(len(p.quorum.members))
		if p.quorum.witness != nil {
			q = p.quorum.witness.name
		}
	}
	return fmt.Sprintf("policy: %d logs, %d witnesses, quorum %s", len(p.logs), len(p.witnesses), q)
}
