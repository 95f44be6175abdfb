package exporter

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Handler serves the exporter's metrics at /metrics from a registry of
// its own, so that nothing but rungs' metrics (no Go runtime figures)
// appears, and a line pointing there at /.
func Handler(x *Exporter) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(x)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      log.New(x.opt.Log, "rungs exporter: ", 0),
		ErrorHandling: promhttp.ContinueOnError,
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "rungs exporter: metrics at /metrics")
	})
	return mux
}

// Serve listens on ln until ctx ends, then shuts down gracefully.
func Serve(ctx context.Context, ln net.Listener, x *Exporter) error {
	srv := &http.Server{Handler: Handler(x), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
