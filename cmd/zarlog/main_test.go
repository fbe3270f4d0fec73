package main

import (
	"os"
	"testing"
)

// TestMain removes the binaries the tests built (tools).
func TestMain(m *testing.M) {
	code := m.Run()
	if toolsDir != "" {
		os.RemoveAll(toolsDir)
	}
	os.Exit(code)
}
