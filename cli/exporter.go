package cli

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/exporter"
)

func (e *env) exporterCommand() *cobra.Command {
	var listen string
	var allVhosts bool
	cmd := &cobra.Command{
		Use:   "exporter",
		Short: "Serve every ladder's metrics to Prometheus",
		Long: `exporter serves /metrics in the Prometheus text format for every ladder in
the vhost (or, with --all-vhosts, in every vhost): per rung its ready and
unacknowledged messages, head age, TTL and whether it looks stalled; per
ladder its messages in flight, unroutable messages, drift and the forecast
of messages due within 1m, 10m, 1h, 1d and later; and the scrape's health
(rungs_up, rungs_scrape_duration_seconds). Each scrape reads the broker like
the console refreshes: one management request per vhost, and a full
snapshot when the set of queues changed. Give the management user the
monitoring tag. Example alert rules and a Grafana dashboard are in deploy/.`,
		Example: `  rungs exporter --listen :9478
  rungs exporter --listen 127.0.0.1:9478 --all-vhosts --context prod`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := e.clients().management()
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return usageErr("--listen %s: %v", listen, err)
			}
			x := exporter.New(m, exporter.Options{
				Vhosts: []string{e.vhost()}, AllVhosts: allVhosts,
				Timeout: e.opts.timeout, Log: e.Err,
			})
			fmt.Fprintf(e.Err, "rungs exporter: serving http://%s/metrics for %s\n", ln.Addr(), broker.RedactURL(m.URL()))
			return exporter.Serve(cmd.Context(), ln, x)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", ":9478", "address to serve /metrics on")
	cmd.Flags().BoolVar(&allVhosts, "all-vhosts", false, "export the ladders of every vhost")
	return cmd
}
