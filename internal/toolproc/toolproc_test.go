package toolproc

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for a tool: with
// TOOLPROC_LISTEN it listens on that address until killed, with
// TOOLPROC_EXIT it exits at once with status 3.
func TestMain(m *testing.M) {
	if addr := os.Getenv("TOOLPROC_LISTEN"); addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			os.Exit(2)
		}
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(2)
			}
			c.Close()
		}
	}
	if os.Getenv("TOOLPROC_EXIT") != "" {
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func TestStartListens(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOOLPROC_LISTEN", addr)
	p, err := Start(context.Background(), os.Args[0], nil, nil, addr)
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	p.Stop() // twice is fine
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Stop", addr)
	}
}

func TestStartExits(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TOOLPROC_EXIT", "1")
	if _, err := Start(context.Background(), os.Args[0], nil, nil, addr); err == nil || !strings.Contains(err.Error(), "exited at start") {
		t.Fatalf("Start of a program that exits: %v, want an error saying it exited at start", err)
	}
}

func TestStartContext(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	// A program that neither listens nor exits.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := Start(ctx, "sleep", []string{"60"}, nil, addr); err == nil || !strings.Contains(err.Error(), "does not listen") {
		t.Fatalf("Start of a program that does not listen: %v, want an error saying so", err)
	}
}

func TestPathUnknownTool(t *testing.T) {
	if _, err := Path(context.Background(), "", "no-such-tool-zarlog"); err == nil || !strings.Contains(err.Error(), "no-such-tool-zarlog") {
		t.Fatalf("Path of an unknown tool: %v, want an error naming it", err)
	}
}
