package model

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

func TestCauseFirstPutsTheRefusalBeforeTheRequest(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	err := fmt.Errorf("read vhost v: management API GET /api/exchanges/v/mg.deliver/bindings/source at http://127.0.0.1:1: %w", dial)
	got := causeFirst(err)
	want := "connection refused (read vhost v: management API GET /api/exchanges/v/mg.deliver/bindings/source at http://127.0.0.1:1: dial tcp: connect)"
	if got != want {
		t.Errorf("causeFirst = %q\nwant %q", got, want)
	}
	// Without an operating system's error the message stays as it is.
	plain := errors.New("no answer within 2s")
	if got := causeFirst(fmt.Errorf("read vhost v: %w", plain)); got != "read vhost v: no answer within 2s" {
		t.Errorf("causeFirst of a plain error = %q", got)
	}
}
