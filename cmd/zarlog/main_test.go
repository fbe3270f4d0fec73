package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// binary is the zarlog binary the tests run, built on first use into a
// directory removed when the tests end.
var binary = &built{}

type built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func (b *built) get() (string, error) {
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "zarlog-bin-")
		if b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "zarlog")
		if out, err := exec.Command("go", "build", "-o", b.bin, ".").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	return b.bin, b.err
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary.dir != "" {
		os.RemoveAll(binary.dir)
	}
	os.Exit(code)
}
