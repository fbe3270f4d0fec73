// Package dicevectors loads the evidence-file vectors of testdata/dice
// (written by the independent Python generator testdata/dice/gen.py) for
// the tests of the verifier, its command line and its binary.
package dicevectors

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Vector is one evidence file and what the verifier must say about it.
type Vector struct {
	Name               string   `json:"name"`
	File               string   `json:"file"` // relative to testdata/dice
	Exit               int      `json:"exit"`
	Failing            []string `json:"failing"` // sorted names of the checks that must fail
	Note               string   `json:"note"`
	ExpectedCommitment *string  `json:"expectedCommitment"`
	LogKey             *string  `json:"logKey"`
	EmitterKeys        []string `json:"emitterKeys"`   // --emitter-key, each
	WitnessPolicy      *string  `json:"witnessPolicy"` // --witness-policy, relative to testdata/dice

	Path       string `json:"-"` // absolute path of the file
	PolicyPath string `json:"-"` // absolute path of the witness policy, if any
}

// Args returns the command-line flags the vector is run with.
func (v Vector) Args() []string {
	var a []string
	if v.ExpectedCommitment != nil {
		a = append(a, "--expected-commitment", *v.ExpectedCommitment)
	}
	if v.LogKey != nil {
		a = append(a, "--log-key", *v.LogKey)
	}
	for _, k := range v.EmitterKeys {
		a = append(a, "--emitter-key", k)
	}
	if v.WitnessPolicy != nil {
		a = append(a, "--witness-policy", v.PolicyPath)
	}
	return a
}

// IsBundle reports whether the vector is a proof bundle (an evidence file
// with a log member), judged by its name.
func (v Vector) IsBundle() bool { return strings.HasPrefix(v.Name, "bundle-") }

// IsTlogProof reports whether the vector is a C2SP tlog-proof file.
func (v Vector) IsTlogProof() bool { return strings.HasSuffix(v.File, ".tlog-proof") }

// Dir returns the absolute path of testdata/dice, found by walking up from
// the working directory to the module root.
func Dir() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "testdata", "dice"), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("dicevectors: no go.mod above the working directory")
		}
		d = parent
	}
}

// Load reads manifest.json. It fails if the manifest is empty or any
// exit code (0, 1, 2) has no vector.
func Load() ([]Vector, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m struct{ Vectors []Vector }
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("dicevectors: manifest.json: %w", err)
	}
	count := map[int]int{}
	for i := range m.Vectors {
		v := &m.Vectors[i]
		v.Path = filepath.Join(dir, filepath.FromSlash(v.File))
		if v.WitnessPolicy != nil {
			v.PolicyPath = filepath.Join(dir, filepath.FromSlash(*v.WitnessPolicy))
		}
		if v.Failing == nil {
			v.Failing = []string{}
		}
		count[v.Exit]++
	}
	for _, code := range []int{0, 1, 2} {
		if count[code] == 0 {
			return nil, fmt.Errorf("dicevectors: no vector with exit code %d", code)
		}
	}
	return m.Vectors, nil
}
