package main

import (
	"context"
	"fmt"
	"io"
)

func runMirror(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "zarlog mirror: not built yet")
	return 2
}
