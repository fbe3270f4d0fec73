package publisher

import (
	"context"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/wire"
)

// NATSAnnouncer returns a BundlerConfig.Announce that publishes each bundle
// on subjects.Proofs(emitter) with core NATS (best effort, like rejections:
// the bundle store and /games/{id}/proof.json are the durable record;
// docs/NATS.md §5a). The payload is the bundle; the headers name the game
// (wire.HeaderGame), the bundle's size (wire.HeaderBundleSize) and its
// checkpoint's tree size (wire.HeaderCheckpointSize). A bundle that does
// not fit the connection's maximum payload is announced with an empty
// payload. nc must stay open while the Bundler runs.
func NATSAnnouncer(nc *nats.Conn, subjects wire.Subjects) func(ctx context.Context, a Announcement) error {
	return func(ctx context.Context, a Announcement) error {
		if err := wire.CheckEmitter(a.Emitter); err != nil {
			return fmt.Errorf("announcing the bundle of %q: %w", a.Game, err)
		}
		m := nats.NewMsg(subjects.Proofs(a.Emitter))
		m.Header.Set(wire.HeaderGame, a.Game)
		m.Header.Set(wire.HeaderBundleSize, strconv.Itoa(len(a.Bundle)))
		m.Header.Set(wire.HeaderCheckpointSize, strconv.FormatUint(a.CheckpointSize, 10))
		// Leave room for the subject and headers within max_payload.
		if int64(len(a.Bundle)) <= nc.MaxPayload()-4096 {
			m.Data = a.Bundle
		}
		if err := nc.PublishMsg(m); err != nil {
			return fmt.Errorf("announcing the bundle of %q: %w", a.Game, err)
		}
		return nil
	}
}
