package main

import (
	"context"
	"fmt"
	"io"
)

func runKeygen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "zarlog keygen: not built yet")
	return 2
}
