package main

import (
	"bytes"
	"context"
	"testing"
)

func TestDemoUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"demo", "-h"}, 0},
		{[]string{"demo", "--games", "0"}, 2},
		{[]string{"demo", "--concurrency", "0"}, 2},
		{[]string{"demo", "extra"}, 2},
		{[]string{"demo", "--nope"}, 2},
		{[]string{"demo", "--exit", "--continuous"}, 2},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), tt.args, &bytes.Buffer{}, &stderr); code != tt.code {
			t.Errorf("zarlog %q: exit %d, want %d: %s", tt.args, code, tt.code, stderr.String())
		}
	}
}
