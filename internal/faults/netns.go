package faults

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// Prefix starts the name of every namespace, bridge and veth a Net makes,
// followed by the pid of the process that made it: CleanStale removes
// those of processes that are gone.
const Prefix = "zf"

// A Net is a bridge in the calling process's namespace, with an address on
// it, and hosts: each a network namespace joined to the bridge by a veth
// pair, with one address on the bridge's /24. The calling process reaches
// every host; the hosts reach each other and the calling process.
type Net struct {
	name   string // Prefix + pid
	bridge string
	subnet string // "10.a.b."
	ipt    string // the iptables command, or "" (partitions take links down)

	mu    sync.Mutex
	hosts []*Host
}

// A Host is a network namespace on a Net's bridge.
type Host struct {
	Name string // the name the caller gave it
	NS   string // the namespace's name
	IP   string // its address on the bridge
	veth string // the bridge's end of its veth pair
	net  *Net
}

// ip runs /usr/sbin/ip (or the ip on PATH) with args.
func ip(args ...string) error {
	out, err := exec.Command(ipPath(), args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func ipPath() string {
	if p, err := exec.LookPath("ip"); err == nil {
		return p
	}
	return "/usr/sbin/ip"
}

// Available says why this machine cannot make a Net, or returns nil: it
// needs root and the ip command.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("network namespaces need root (CI runs as root)")
	}
	if _, err := os.Stat(ipPath()); err != nil {
		return fmt.Errorf("no ip command (iproute2): %w", err)
	}
	return nil
}

// CleanStale removes the namespaces and links that a Net of a process no
// longer running left behind (a run killed before its cleanup).
func CleanStale() {
	alive := func(name string) bool {
		rest := strings.TrimPrefix(name, Prefix)
		end := 0
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		pid, err := strconv.Atoi(rest[:end])
		if err != nil {
			return true // not ours
		}
		_, err = os.Stat("/proc/" + strconv.Itoa(pid))
		return err == nil
	}
	if out, err := exec.Command(ipPath(), "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && strings.HasPrefix(f[0], Prefix) && !alive(f[0]) {
				ip("netns", "del", f[0])
			}
		}
	}
	if out, err := exec.Command(ipPath(), "-o", "link", "show").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			if strings.HasPrefix(name, Prefix) && !alive(name) {
				ip("link", "del", name)
			}
		}
	}
}

// NewNet makes the bridge, on a random 10.x.y.0/24 (so that a Net left
// behind by a crashed run does not collide with this one), with the
// address 10.x.y.1.
func NewNet(rng *rand.Rand) (*Net, error) {
	n := &Net{name: Prefix + strconv.Itoa(os.Getpid())}
	n.bridge = n.name + "br"
	n.subnet = fmt.Sprintf("10.%d.%d.", 100+rng.IntN(150), rng.IntN(256))
	if p, err := exec.LookPath("iptables"); err == nil {
		n.ipt = p
	}
	if err := ip("link", "add", n.bridge, "type", "bridge"); err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		{"addr", "add", n.subnet + "1/24", "dev", n.bridge},
		{"link", "set", n.bridge, "up"},
	} {
		if err := ip(args...); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

// Gateway is the calling process's address on the bridge.
func (n *Net) Gateway() string { return n.subnet + "1" }

// Iptables says whether partitions are iptables rules (true) or links
// taken down (false: the host is cut off from every other).
func (n *Net) Iptables() bool { return n.ipt != "" }

// AddHost makes a namespace joined to the bridge, with the address
// 10.x.y.(10+its number).
func (n *Net) AddHost(name string) (*Host, error) {
	n.mu.Lock()
	i := len(n.hosts) + 1
	h := &Host{Name: name, NS: fmt.Sprintf("%s-%s", n.name, name), IP: fmt.Sprintf("%s%d", n.subnet, 10+i),
		veth: fmt.Sprintf("%sv%d", n.name, i), net: n}
	n.hosts = append(n.hosts, h)
	n.mu.Unlock()
	peer := h.veth + "p"
	for _, args := range [][]string{
		{"netns", "add", h.NS},
		{"link", "add", h.veth, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", h.NS},
		{"link", "set", h.veth, "master", n.bridge, "up"},
		{"-n", h.NS, "addr", "add", h.IP + "/24", "dev", peer},
		{"-n", h.NS, "link", "set", peer, "up"},
		{"-n", h.NS, "link", "set", "lo", "up"},
	} {
		if err := ip(args...); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Close deletes every host's namespace (and with it its veth pair) and the
// bridge. It is safe to call more than once.
func (n *Net) Close() error {
	n.mu.Lock()
	hosts := n.hosts
	n.hosts = nil
	n.mu.Unlock()
	var errs []error
	for _, h := range hosts {
		if err := ip("netns", "del", h.NS); err != nil {
			errs = append(errs, err)
		}
		ip("link", "del", h.veth) // gone with the namespace, normally
	}
	if n.bridge != "" {
		if err := ip("link", "del", n.bridge); err != nil {
			errs = append(errs, err)
		}
		n.bridge = ""
	}
	return errors.Join(errs...)
}

// Command returns a command running name with args inside the host's
// namespace. `ip netns exec` execs the program, so the started process is
// the program itself: signals reach it directly.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, ipPath(), append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Cut drops every packet between the host and each of others, in both
// directions, until Heal. Without iptables it takes the host's link down:
// the host is then cut off from every other, the caller included.
func (h *Host) Cut(others ...*Host) error {
	if h.net.ipt == "" {
		return ip("link", "set", h.veth, "down")
	}
	for _, o := range others {
		for _, rule := range [][]string{
			{"-A", "INPUT", "-s", o.IP, "-j", "DROP"},
			{"-A", "OUTPUT", "-d", o.IP, "-j", "DROP"},
		} {
			if err := h.iptables(rule...); err != nil {
				return err
			}
		}
	}
	return nil
}

// Heal removes the host's partitions.
func (h *Host) Heal() error {
	if h.net.ipt == "" {
		return ip("link", "set", h.veth, "up")
	}
	return errors.Join(h.iptables("-F", "INPUT"), h.iptables("-F", "OUTPUT"))
}

func (h *Host) iptables(args ...string) error {
	args = append([]string{"netns", "exec", h.NS, h.net.ipt, "-w"}, args...)
	out, err := exec.Command(ipPath(), args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
