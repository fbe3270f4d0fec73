package main

import (
	"context"
	"fmt"
	"io"
)

func runEmit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "zarlog emit: not built yet")
	return 2
}
