package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestContainerImage builds the image of deploy/Containerfile with
// deploy/build-image.sh (buildah: a static binary on scratch, no registry)
// and runs `zarlog demo --exit` inside it with podman, as the non-root user
// of the image, its data on a volume: every game is published and
// verified. It skips where buildah or podman is missing, except under CI,
// whose .ci/deps installs them.
func TestContainerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and runs a container")
	}
	for _, tool := range []string{"buildah", "podman"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing: .ci/deps installs it", tool)
			}
			t.Skipf("no %s here", tool)
		}
	}
	tag := fmt.Sprintf("localhost/zarlog:test-%d", os.Getpid())
	build := exec.Command("./deploy/build-image.sh", tag)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the image: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", tag).Run() })

	data := t.TempDir()
	os.Chmod(data, 0o777) // the image's user is 65532
	// runc and cgroupfs run on every cgroup layout (crun refuses hybrid
	// ones); the limits stay below this process's own, which a sandbox
	// may forbid raising.
	var nofile syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile)
	args := []string{"--cgroup-manager=cgroupfs", "run", "--rm",
		"--ulimit", fmt.Sprintf("nofile=%d:%d", min(nofile.Cur, 65536), min(nofile.Cur, 65536)), "--ulimit", "nproc=4096:4096",
		"-v", data + ":/data", tag, "demo", "--exit", "--games", "3", "--data", "/data/demo"}
	if _, err := exec.LookPath("runc"); err == nil {
		args = append([]string{"--runtime", "runc"}, args...)
	}
	out, err := exec.Command("podman", args...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "3 of 3 games verified") {
		t.Fatalf("zarlog demo --exit in the image: %v\n%s", err, out)
	}
	runs, _ := filepath.Glob(filepath.Join(data, "demo", "run-*", "log.key"))
	if len(runs) != 1 {
		t.Fatalf("the demo's data on the volume: %v", runs)
	}
	if fi, err := os.Stat(runs[0]); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != 65532 {
			t.Errorf("the log key is owned by %v, want the image's user 65532", fi.Sys())
		}
	}
}
