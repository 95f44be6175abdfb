package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

func (e *env) exportCommand() *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Write a ladder as RabbitMQ definitions or Terraform, for infrastructure as code",
		Long: `export writes every object of a ladder, so that the ladder can be built by
your infrastructure code instead of by rungs:

  definitions   RabbitMQ's definitions JSON: import it with
                rabbitmqctl import_definitions FILE, the management UI, or
                POST /api/definitions/VHOST
  terraform     resources for the community RabbitMQ provider
                (cyrilgdn/rabbitmq): rabbitmq_exchange, rabbitmq_queue with
                arguments_json, rabbitmq_binding; the vhost is a variable

When the ladder exists on the broker and no shape flag is given, its
discovered shape (and destinations) is exported; otherwise the flags describe
it, and the broker is not needed. Destination queues are declared too
(durable, the ladder's queue type; for Celery also their exchange), because
RabbitMQ refuses a binding to a queue that does not exist.

After importing, rungs plan --ladder NAME shows no drift: the export is the plan.`,
		Example: `  rungs export --ladder jobs > jobs-definitions.json
  rungs export --ladder jobs --format terraform --out ladder.tf
  rungs export --ladder jobs --unit 1s --max-delay 7d --target orders.retry --format terraform
  rungs export --layout celery --queue-type quorum --target celery
  curl -u admin -H 'content-type: application/json' -d @jobs-definitions.json \
      http://localhost:15672/api/definitions/%2F`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ops.CheckExportFormat(format); err != nil {
				return err
			}
			r, err := e.resolveLadderFrom(cmd.Context(), e.ladderSnapshot)
			if err != nil {
				return err
			}
			for _, n := range ops.ExportNotes(r.snap != nil, r.mgmtErr, r.discovered, e.opts.ladder.noLadder(r), r.layoutNote) {
				fmt.Fprintln(e.Err, n)
			}
			plan := e.declaredPlan(cmd.Context(), r)
			data, err := ops.Export(format, r.ladder, plan, Version)
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = e.Out.Write(data)
				return err
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return err
			}
			p := plan.Closed()
			fmt.Fprintf(e.Err, "wrote %s: %s, %s, %s\n", out, topology.Counted(len(p.Exchanges), "exchange", "exchanges"),
				topology.Counted(len(p.Queues), "queue", "queues"), topology.Counted(len(p.Bindings), "binding", "bindings"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", ops.ExportDefinitions, "definitions (RabbitMQ JSON) or terraform (cyrilgdn/rabbitmq)")
	f.StringVarP(&out, "out", "o", "", "write to this file instead of stdout")
	f.StringSliceVar(&e.opts.ladder.targets, "target", nil, "destination queue to bind (repeatable)")
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return ops.ExportFormats, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}
