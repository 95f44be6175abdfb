package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// Vhost is a vhost a run makes for itself and removes afterwards, so that
// it never meets the broker's own objects and leaves nothing behind.
type Vhost struct {
	// Config is the run's broker configuration, pointed at the vhost.
	Config broker.Config
	mgmt   *broker.Management
}

// NewVhost creates a vhost named prefix and a random suffix.
func NewVhost(ctx context.Context, mgmt *broker.Management, cfg broker.Config, prefix string) (Vhost, error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	cfg.Vhost = prefix + hex.EncodeToString(b)
	if err := mgmt.CreateVhost(ctx, cfg.Vhost); err != nil {
		return Vhost{}, fmt.Errorf("create vhost %s: %w", cfg.Vhost, err)
	}
	return Vhost{Config: cfg, mgmt: mgmt}, nil
}

// Remove deletes the vhost, waiting at most wait even when ctx has ended,
// and adds a failure to problems: a report's Problems, which the caller
// returns as a named result so that a deferred Remove reaches it.
func (v Vhost) Remove(ctx context.Context, wait time.Duration, problems *[]string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	if err := v.mgmt.DeleteVhost(dctx, v.Config.Vhost); err != nil {
		*problems = append(*problems, fmt.Sprintf("delete vhost %s: %v", v.Config.Vhost, err))
	}
}
