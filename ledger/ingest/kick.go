package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// The system account's services this file uses (nats-server 2.10 and
// later; go.mod pins the version the tests run).
const (
	// sysPingConnz asks every server of the deployment for its
	// connections (one reply from each).
	sysPingConnz = "$SYS.REQ.SERVER.PING.CONNZ"
	// sysPingStatsz asks every server for its statistics: CheckSystem's
	// probe.
	sysPingStatsz = "$SYS.REQ.SERVER.PING.STATSZ"
	// sysKick closes one connection on the server with this id.
	sysKick = "$SYS.REQ.SERVER.%s.KICK"
)

// sysTimeout is how long a system request waits for the first reply, and
// for as many as the servers the connection knows of (sysRequestAll), and
// a kick for its answer; sysQuiet how long it waits after that for more.
const (
	sysQuiet   = 250 * time.Millisecond
	sysTimeout = 2 * time.Second
)

// A sysReply is a system service's reply: the answering server, its data
// and its error.
type sysReply struct {
	Server struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"server"`
	Data  json.RawMessage `json:"data"`
	Error *struct {
		Code        int    `json:"code"`
		Description string `json:"description"`
	} `json:"error"`
}

// SystemDisconnect returns a Config.Disconnect for an external NATS
// deployment, through sys, a connection of a user of the deployment's
// system account: it asks every server for the connections whose user is
// one of users(emitter) ($SYS.REQ.SERVER.PING.CONNZ, filtered by user: the
// user name of a password, the public nkey of an nkey or of a JWT user)
// and closes each on its server ($SYS.REQ.SERVER.<id>.KICK). The users
// are asked at once, each with its own time (a user whose question fails
// does not keep the others' connections open), and a call made while the
// last for the same emitter still runs does nothing. It returns how many
// it closed. An emitter with no users is an error, as is one with no
// connection found and a deployment where no server answers.
func SystemDisconnect(sys *nats.Conn, users func(emitter string) []string) func(emitter string) (int, error) {
	var mu sync.Mutex
	running := make(map[string]bool)
	return func(emitter string) (int, error) {
		names := users(emitter)
		if len(names) == 0 {
			return 0, fmt.Errorf("nats system account: emitter %s has no NATS user to disconnect", emitter)
		}
		mu.Lock()
		if running[emitter] {
			mu.Unlock()
			return 0, nil
		}
		running[emitter] = true
		mu.Unlock()
		defer func() { mu.Lock(); delete(running, emitter); mu.Unlock() }()

		var (
			wg      sync.WaitGroup
			rmu     sync.Mutex
			n       int
			servers int
			errs    []error
		)
		for _, user := range names {
			wg.Go(func() {
				k, answered, err := kickUser(sys, emitter, user)
				rmu.Lock()
				defer rmu.Unlock()
				n += k
				servers = max(servers, answered)
				if err != nil {
					errs = append(errs, err)
				}
			})
		}
		wg.Wait()
		if n == 0 && len(errs) == 0 {
			errs = append(errs, fmt.Errorf("nats system account: no connection of emitter %s (users %s) on the %d servers that answered", emitter, strings.Join(names, ", "), servers))
		}
		return n, errors.Join(errs...)
	}
}

// kickUser closes every connection of user (one of emitter's) on every
// server that answers, and returns how many it closed and how many
// servers answered.
func kickUser(sys *nats.Conn, emitter, user string) (int, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*sysTimeout)
	defer cancel()
	req, _ := json.Marshal(map[string]any{"auth": true, "user": user, "limit": 1 << 16})
	replies, err := sysRequestAll(ctx, sys, sysPingConnz, req)
	if len(replies) == 0 {
		return 0, 0, fmt.Errorf("nats system account: the connections of emitter %s (user %s): %w", emitter, user, err)
	}
	var errs []error
	if err != nil {
		errs = append(errs, fmt.Errorf("nats system account: the connections of emitter %s (user %s): %w", emitter, user, err))
	}
	n := 0
	for _, r := range replies {
		if r.Error != nil {
			errs = append(errs, fmt.Errorf("server %s: connz: %s", r.Server.Name, r.Error.Description))
			continue
		}
		if !nkeys.IsValidPublicServerKey(r.Server.ID) {
			errs = append(errs, fmt.Errorf("server %q: connz: its id %q is not a server's public key", r.Server.Name, r.Server.ID))
			continue
		}
		var connz struct {
			Conns []struct {
				CID  uint64 `json:"cid"`
				User string `json:"authorized_user"`
			} `json:"connections"`
		}
		if err := json.Unmarshal(r.Data, &connz); err != nil {
			errs = append(errs, fmt.Errorf("server %s: connz: %w", r.Server.Name, err))
			continue
		}
		for _, c := range connz.Conns {
			if c.User != user {
				continue // a server that did not filter
			}
			if err := sysKickConn(ctx, sys, r.Server.ID, c.CID); err != nil {
				errs = append(errs, fmt.Errorf("server %s: closing connection %d of emitter %s: %w", r.Server.Name, c.CID, emitter, err))
				continue
			}
			n++
		}
	}
	return n, len(replies), errors.Join(errs...)
}

// sysKickConn closes connection cid on the server with id.
func sysKickConn(ctx context.Context, sys *nats.Conn, id string, cid uint64) error {
	req, _ := json.Marshal(map[string]uint64{"cid": cid})
	kctx, cancel := context.WithTimeout(ctx, sysTimeout)
	defer cancel()
	msg, err := sys.RequestWithContext(kctx, fmt.Sprintf(sysKick, id), req)
	if err != nil {
		return err
	}
	var r sysReply
	if err := json.Unmarshal(msg.Data, &r); err != nil {
		return fmt.Errorf("its reply: %w", err)
	}
	if r.Error != nil {
		return errors.New(r.Error.Description)
	}
	return nil
}

// sysRequestAll sends a request every server answers and gathers the
// replies: it waits up to sysTimeout for as many as the servers sys knows
// of (its pool, the URLs it was given and those the servers announced),
// and sysQuiet after each reply past that many for more. A loaded server
// may answer well after another, so the quiet wait alone could miss it.
func sysRequestAll(ctx context.Context, sys *nats.Conn, subject string, data []byte) ([]sysReply, error) {
	known := len(sys.Servers())
	deadline := time.Now().Add(sysTimeout)
	inbox := sys.NewRespInbox()
	sub, err := sys.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := sys.PublishRequest(subject, inbox, data); err != nil {
		return nil, err
	}
	var replies []sysReply
	var bad []error // replies that do not parse: the others still count
	wait := sysTimeout
	for {
		wctx, cancel := context.WithTimeout(ctx, wait)
		msg, err := sub.NextMsgWithContext(wctx)
		cancel()
		if err != nil {
			switch {
			case len(replies) > 0 && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
				return replies, errors.Join(bad...)
			case len(replies) == 0 && len(bad) == 0 && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders)):
				return nil, fmt.Errorf("no server answers %s: the user is not one of the system account's (%w)", subject, err)
			}
			return replies, errors.Join(append(bad, err)...)
		}
		var r sysReply
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			bad = append(bad, fmt.Errorf("%s: a reply: %w", subject, err))
			continue
		}
		replies = append(replies, r)
		wait = sysQuiet
		if len(replies) < known {
			wait = max(time.Until(deadline), sysQuiet)
		}
	}
}

// CheckSystem asks every server of the deployment for its statistics
// through sys and returns how many answered: an error says that sys is not
// a connection of the system account (SystemDisconnect would not work).
func CheckSystem(ctx context.Context, sys *nats.Conn) (int, error) {
	replies, err := sysRequestAll(ctx, sys, sysPingStatsz, nil)
	if len(replies) == 0 {
		return 0, fmt.Errorf("nats system account: %w", err)
	}
	return len(replies), nil
}
