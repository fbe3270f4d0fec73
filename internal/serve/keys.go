package serve

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nkeys"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/wire"
)

// A loadedKey is the log's checkpoint key.
type loadedKey struct {
	file     string
	created  bool
	vkey     string
	signer   note.Signer
	verifier note.Verifier
}

// loadOrCreateKey loads the log's key; on the first run without a key file
// it creates DIR/log.key (mode 0600) for Config.Origin.
func loadOrCreateKey(cfg *Config) (*loadedKey, error) {
	if cfg.KeyFile == "" {
		p := filepath.Join(cfg.Dir, "log.key")
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			r := cfg.Rand
			if r == nil {
				r = rand.Reader
			}
			skey, _, err := merkle.GenerateKey(r, orDefault(cfg.Origin, DefaultOrigin))
			if err != nil {
				return nil, fmt.Errorf("serve: creating the log key: %w", err)
			}
			if err := writeKey(p, skey); err != nil {
				return nil, err
			}
			k, err := parseKey(p, skey, cfg.Origin)
			if err != nil {
				return nil, err
			}
			k.created = true
			return k, nil
		}
	}
	return loadKey(cfg)
}

// loadKey loads the log's key from Config.KeyFile or DIR/log.key.
func loadKey(cfg *Config) (*loadedKey, error) {
	p := cfg.KeyFile
	if p == "" {
		p = filepath.Join(cfg.Dir, "log.key")
	}
	b, err := ReadSecretFile(p)
	if err != nil {
		return nil, fmt.Errorf("serve: the log key: %w", err)
	}
	return parseKey(p, strings.TrimSuffix(string(b), "\n"), cfg.Origin)
}

// parseKey makes the signer and verifier of a signer key; origin, if not
// empty, must be its name.
func parseKey(file, skey, origin string) (*loadedKey, error) {
	signer, err := merkle.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("serve: the log key %s: %w", file, err)
	}
	if origin != "" && signer.Name() != origin {
		return nil, fmt.Errorf("serve: the log key %s is for origin %q, not %q", file, signer.Name(), origin)
	}
	vkey, err := merkle.VerifierKey(skey)
	if err != nil {
		return nil, fmt.Errorf("serve: the log key %s: %w", file, err)
	}
	verifier, err := merkle.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("serve: the log key %s: %w", file, err)
	}
	return &loadedKey{file: file, vkey: vkey, signer: signer, verifier: verifier}, nil
}

// writeKey creates the key file exclusively with mode 0600 and syncs it and
// its directory.
func writeKey(path, skey string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("serve: creating the log key: %w", err)
	}
	_, err = fmt.Fprintln(f, skey)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if d, derr := os.Open(filepath.Dir(path)); derr == nil {
			err = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("serve: writing the log key %s: %w", path, err)
	}
	return nil
}

// ParseEmitters reads the file of `zarlog serve --emitters`: one emitter a
// line, as `zarlog keygen --emitter` prints it,
//
//	<event verifier key> [<NATS user nkey U…>]
//
// (blank lines and '#' comments skipped). It returns the verifier keys, and
// for each line with an nkey the embedded server's access for that emitter
// (named by the verifier key's name), so that the file alone gives a
// working, closed setup.
func ParseEmitters(text []byte) (vkeys []string, access []ingest.EmitterAccess, err error) {
	for n, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) > 2 {
			return nil, nil, fmt.Errorf("line %d: want \"<verifier key> [<nkey U…>]\", got %d fields", n+1, len(f))
		}
		vkeys = append(vkeys, f[0])
		if len(f) == 2 {
			name, _, _ := strings.Cut(f[0], "+")
			if err := wire.CheckEmitter(name); err != nil {
				return nil, nil, fmt.Errorf("line %d: the verifier key's name: %w", n+1, err)
			}
			if !nkeys.IsValidPublicUserKey(f[1]) {
				return nil, nil, fmt.Errorf("line %d: %q is not a public user nkey (U…)", n+1, f[1])
			}
			access = append(access, ingest.EmitterAccess{Emitter: name, NKey: f[1]})
		}
	}
	return vkeys, access, nil
}

// MergeAccess joins the emitters' NATS access from the --emitters file and
// from --nats-users; an emitter in both is an error.
func MergeAccess(a, b []ingest.EmitterAccess) ([]ingest.EmitterAccess, error) {
	seen := map[string]bool{}
	var out []ingest.EmitterAccess
	for _, x := range append(slices.Clip(a), b...) {
		if seen[x.Emitter] {
			return nil, fmt.Errorf("emitter %s is given NATS access twice (--emitters and --nats-users)", x.Emitter)
		}
		seen[x.Emitter] = true
		out = append(out, x)
	}
	return out, nil
}

// ReadSecretFile reads a file that holds secrets (the log key, the
// --nats-users file, the admin token), refusing it if group or others may
// read it, as sshd does.
func ReadSecretFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is readable by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
	}
	return os.ReadFile(path)
}

// ParseNATSUsers reads the emitters allowed to connect to the embedded
// nats-server (`zarlog serve --nats-users`), one per line:
//
//	<emitter> password <password>
//	<emitter> nkey <public user nkey U…>
//
// Blank lines and lines starting with '#' are skipped. Each emitter gets
// the permissions of docs/NATS.md §7.
func ParseNATSUsers(text []byte) ([]ingest.EmitterAccess, error) {
	var out []ingest.EmitterAccess
	seen := map[string]bool{}
	for n, line := range strings.Split(string(text), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want \"<emitter> password|nkey <value>\", got %d fields", n+1, len(f))
		}
		if err := wire.CheckEmitter(f[0]); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("line %d: emitter %s listed twice", n+1, f[0])
		}
		seen[f[0]] = true
		a := ingest.EmitterAccess{Emitter: f[0]}
		switch f[1] {
		case "password":
			a.Password = f[2]
		case "nkey":
			if !strings.HasPrefix(f[2], "U") {
				return nil, fmt.Errorf("line %d: an nkey must be a public user key (U…)", n+1)
			}
			a.NKey = f[2]
		default:
			return nil, fmt.Errorf("line %d: %q is neither password nor nkey", n+1, f[1])
		}
		out = append(out, a)
	}
	return out, nil
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// listenAddr splits the embedded server's listen address into the host
// and port of ingest.ServerConfig (port 0 picks a free port: -1 there).
func listenAddr(addr string) (string, int, error) {
	host, ps, err := net.SplitHostPort(orDefault(addr, DefaultNATSListen))
	if err != nil {
		return "", 0, fmt.Errorf("serve: the NATS listen address: %w", err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("serve: the NATS listen address %q: bad port", addr)
	}
	if port == 0 {
		port = -1
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

// baseURL is the URL of a listener: an unspecified host (all interfaces)
// is shown as localhost.
func baseURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
