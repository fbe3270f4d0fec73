// This file (formerly package dicevectors) loads the evidence-file vectors of testdata/dice
// (written by the independent Python generator testdata/dice/gen.py) and
// the proof bundles of games with logged moves of testdata/moves (written
// by this package's TestMoveVectors with -update) for the tests of the
// verifier, its command line and its binary.
package testonly

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
	File               string   `json:"file"` // relative to testdata/dice (testdata/moves)
	Exit               int      `json:"exit"`
	Failing            []string `json:"failing"` // sorted names of the checks that must fail
	Note               string   `json:"note"`
	ExpectedCommitment *string  `json:"expectedCommitment"`
	LogKey             *string  `json:"logKey"`
	EmitterKeys        []string `json:"emitterKeys"`   // --emitter-key, each
	WitnessPolicy      *string  `json:"witnessPolicy"` // --witness-policy, relative to testdata/dice
	// MoveCode and MoveRule are what a failing moves check must name
	// (testdata/moves): the ledger's rejection code and the rule.
	MoveCode string `json:"moveCode,omitempty"`
	MoveRule string `json:"moveRule,omitempty"`

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
// with a log member), judged by its name: testdata/moves holds only
// bundles.
func (v Vector) IsBundle() bool {
	return strings.HasPrefix(v.Name, "bundle-") || strings.HasPrefix(v.Name, "moves-")
}

// IsTlogProof reports whether the vector is a C2SP tlog-proof file.
func (v Vector) IsTlogProof() bool { return strings.HasSuffix(v.File, ".tlog-proof") }

// Dir returns the absolute path of testdata/dice, found by walking up from
// the working directory to the module root.
func Dir() (string, error) { return testdata("dice") }

// MovesDir returns the absolute path of testdata/moves.
func MovesDir() (string, error) { return testdata("moves") }

func testdata(name string) (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "testdata", name), nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("dicevectors: no go.mod above the working directory")
		}
		d = parent
	}
}

// Load reads testdata/dice/manifest.json. It fails if the manifest is
// empty or any exit code (0, 1, 2) has no vector.
func Load() ([]Vector, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	return load(dir, 0, 1, 2)
}

// LoadMoves reads testdata/moves/manifest.json. It fails if the manifest
// has no valid or no invalid vector.
func LoadMoves() ([]Vector, error) {
	dir, err := MovesDir()
	if err != nil {
		return nil, err
	}
	return load(dir, 0, 1)
}

// LoadAll returns the vectors of Load and LoadMoves.
func LoadAll() ([]Vector, error) {
	a, err := Load()
	if err != nil {
		return nil, err
	}
	b, err := LoadMoves()
	if err != nil {
		return nil, err
	}
	return append(a, b...), nil
}

func load(dir string, exits ...int) ([]Vector, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var m struct{ Vectors []Vector }
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("dicevectors: %s/manifest.json: %w", filepath.Base(dir), err)
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
	for _, code := range exits {
		if count[code] == 0 {
			return nil, fmt.Errorf("dicevectors: %s/manifest.json: no vector with exit code %d", filepath.Base(dir), code)
		}
	}
	return m.Vectors, nil
}
