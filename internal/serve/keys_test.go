package serve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeys: the first run creates the log key for the origin, mode 0600;
// later runs load it; a key for another origin, a group-readable key and a
// missing key file are refused.
func TestKeys(t *testing.T) {
	dir := t.TempDir()
	cfg := &Config{Dir: dir, Origin: "keys.example/log"}
	k, err := loadOrCreateKey(cfg)
	if err != nil || !k.created || k.signer.Name() != "keys.example/log" {
		t.Fatalf("creating: %+v, %v", k, err)
	}
	k2, err := loadOrCreateKey(cfg)
	if err != nil || k2.created || k2.vkey != k.vkey {
		t.Fatalf("loading: %+v, %v", k2, err)
	}
	if _, err := loadOrCreateKey(&Config{Dir: dir, Origin: "other.example/log"}); err == nil {
		t.Error("a key for another origin was accepted")
	}
	if k3, err := loadOrCreateKey(&Config{Dir: dir}); err != nil || k3.vkey != k.vkey {
		t.Errorf("loading without an origin: %v", err)
	}
	if err := os.Chmod(filepath.Join(dir, "log.key"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOrCreateKey(cfg); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a group-readable key: %v", err)
	}
	if _, err := loadOrCreateKey(&Config{Dir: dir, KeyFile: filepath.Join(dir, "missing.key")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing key file: %v", err)
	}
}
