package main

import (
	"context"
	"fmt"
	"io"
)

func runWitness(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "zarlog witness: not built yet")
	return 2
}
