package main

import (
	"context"
	"fmt"
	"io"
)

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "zarlog audit: not built yet")
	return 2
}
