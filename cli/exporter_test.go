package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/internal/testutil"
)

// lockedBuffer is a bytes.Buffer safe to read while a command writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestExporterCommandNoPassword runs rungs exporter against a broker that
// does not answer: /metrics says rungs_up 0, the log says why, and the
// password is in neither.
func TestExporterCommandNoPassword(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"exporter", "--listen", addr, "--timeout", "1s"}, IO{
			In: strings.NewReader(""), Out: io.Discard, Err: &errb,
			Getenv: func(k string) string { return offline[k] },
		})
	}()
	var body string
	_ = testutil.Poll{Within: 20 * time.Second, Every: 100 * time.Millisecond}.Until(t, func() error {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return nil
	})
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(body, "\nrungs_up 0\n") {
		t.Errorf("metrics:\n%s", body)
	}
	log := errb.String()
	if strings.Contains(body+log, "s3cret-pw") {
		t.Errorf("the password leaked:\n%s\n%s", body, log)
	}
	if !strings.Contains(log, "rungs exporter: read vhost /") {
		t.Errorf("log:\n%s", log)
	}
}

func TestExporterCommandBadListen(t *testing.T) {
	code, _, errs := run(t, offline, "exporter", "--listen", "nonsense:address:1")
	if code != ExitUsage || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "s3cret") {
		t.Errorf("exit %d: %q", code, errs)
	}
}
