package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/wire"
)

// execStart returns the command line of a unit's ExecStart (its
// continuation lines joined).
func execStart(t *testing.T, unit []byte) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)\nExecStart=(.*?[^\\])\n`).FindSubmatch(unit)
	if m == nil {
		t.Fatal("no ExecStart in the unit")
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " ")), " ")
}

// TestDeployThreeNodes checks deploy/three-nodes, the documented
// three-node example: every flag its zarlog units pass is one of zarlog
// serve's, they differ only by --standby and share the key, bucket, NATS
// and lease; nats.conf is read by nats-server's own parser (with the name
// the unit sets) as a JetStream cluster of three routes whose ledger user
// has exactly ingest.LedgerPermissions and whose nkeys are valid; and,
// where systemd-analyze is installed, systemd verifies every unit (with
// its binary replaced by one that exists here) without a word.
func TestDeployThreeNodes(t *testing.T) {
	dir := "../../deploy/three-nodes"
	var usage bytes.Buffer
	run(context.Background(), []string{"serve", "-h"}, io.Discard, &usage)
	lines := map[string]string{}
	for _, role := range []string{"primary", "standby"} {
		unit, err := os.ReadFile(filepath.Join(dir, "zarlog-"+role+".service"))
		if err != nil {
			t.Fatal(err)
		}
		line := execStart(t, unit)
		if !strings.HasPrefix(line, "/usr/local/bin/zarlog serve ") {
			t.Fatalf("zarlog-%s.service runs %q", role, line)
		}
		for _, f := range regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(line, -1) {
			if !strings.Contains(usage.String(), "  -"+f[1]+" ") && !strings.Contains(usage.String(), "  -"+f[1]+"\n") {
				t.Errorf("zarlog-%s.service passes --%s, which zarlog serve does not take", role, f[1])
			}
		}
		lines[role] = line
	}
	if strings.Replace(lines["standby"], " --standby", "", 1) != lines["primary"] || !strings.Contains(lines["standby"], " --standby ") {
		t.Errorf("the units differ by more than --standby:\n%s\n%s", lines["primary"], lines["standby"])
	}
	for _, want := range []string{"--storage s3://", "--nats nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222", "--nats-replicas 3", "--key /etc/zarlog/log.key"} {
		if !strings.Contains(lines["primary"], want) {
			t.Errorf("the zarlog units do not pass %s", want)
		}
	}

	// nats.conf, as nats-server reads it.
	t.Setenv("NATS_SERVER_NAME", "nats-1")
	opts, err := server.ProcessConfigFile(filepath.Join(dir, "nats.conf"))
	if err != nil {
		t.Fatalf("nats.conf: %v", err)
	}
	if opts.ServerName != "nats-1" || !opts.JetStream || opts.Cluster.Name != "zarlog" || len(opts.Routes) != 3 {
		t.Errorf("nats.conf: name %q, JetStream %t, cluster %q, %d routes", opts.ServerName, opts.JetStream, opts.Cluster.Name, len(opts.Routes))
	}
	want := ingest.LedgerPermissions(wire.Subjects{}, "ZARLOG_EVENTS", "zarlog-ledger")
	var ledgerUsers, emitters int
	for _, u := range opts.Nkeys {
		if !nkeys.IsValidPublicUserKey(u.Nkey) {
			t.Errorf("nats.conf: %q is not a user nkey", u.Nkey)
		}
		switch {
		case u.Permissions != nil && slices.Contains(u.Permissions.Publish.Allow, "zarlog.admitted.*"):
			ledgerUsers++
			for _, p := range [][2][]string{{u.Permissions.Publish.Allow, want.Publish.Allow}, {u.Permissions.Subscribe.Allow, want.Subscribe.Allow}} {
				got, w := slices.Clone(p[0]), slices.Clone(p[1])
				slices.Sort(got)
				slices.Sort(w)
				if !slices.Equal(got, w) {
					t.Errorf("nats.conf: the ledger user's permissions %v, ingest.LedgerPermissions %v", got, w)
				}
			}
		case u.Permissions != nil:
			emitters++
			if !slices.Equal(u.Permissions.Publish.Allow, []string{"zarlog.events.acme", "zarlog.receipts.acme"}) {
				t.Errorf("nats.conf: the emitter may publish %v", u.Permissions.Publish.Allow)
			}
		}
	}
	if ledgerUsers != 1 || emitters != 1 {
		t.Errorf("nats.conf: %d ledger users, %d emitters", ledgerUsers, emitters)
	}

	// systemd's own check.
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the units were not verified by systemd")
		return
	}
	units, _ := filepath.Glob(filepath.Join(dir, "*.service"))
	if len(units) != 4 {
		t.Fatalf("%d units in %s", len(units), dir)
	}
	tmp := t.TempDir()
	var names []string
	for _, u := range units {
		b, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		// systemd checks that the binary exists: one that does here.
		b = regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/[a-z-]+`).ReplaceAll(b, []byte("ExecStart=/bin/true"))
		name := filepath.Join(tmp, filepath.Base(u))
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	out, err := exec.Command(sa, append([]string{"verify"}, names...)...).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
