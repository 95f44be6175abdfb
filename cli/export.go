package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Export formats.
const (
	formatDefinitions = "definitions"
	formatTerraform   = "terraform"
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
			if format != formatDefinitions && format != formatTerraform {
				return usageErr("--format %q: want definitions or terraform", format)
			}
			r, err := e.resolveLadderFrom(cmd.Context(), e.ladderSnapshot)
			if err != nil {
				return err
			}
			switch {
			case r.snap == nil:
				fmt.Fprintf(e.Err, "rungs: note: the broker was not read (%v); exporting the ladder the flags describe\n", r.mgmtErr)
			case !r.discovered:
				fmt.Fprintf(e.Err, "rungs: note: %s; exporting the ladder the flags describe\n", e.opts.ladder.noLadder(r))
				e.view().printLayoutNote(r)
			}
			plan := e.declaredPlan(cmd.Context(), r)
			var data []byte
			if format == formatTerraform {
				data = terraformExport(r.ladder, plan)
			} else if data, err = definitionsExport(r.ladder, plan); err != nil {
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
	f.StringVar(&format, "format", formatDefinitions, "definitions (RabbitMQ JSON) or terraform (cyrilgdn/rabbitmq)")
	f.StringVarP(&out, "out", "o", "", "write to this file instead of stdout")
	f.StringSliceVar(&e.opts.ladder.targets, "target", nil, "destination queue to bind (repeatable)")
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{formatDefinitions, formatTerraform}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// definitionsExport is the ladder's plan p, closed, as definitions JSON.
func definitionsExport(l topology.Ladder, p topology.Plan) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(broker.PlanDefinitions(p.Closed(), l.Vhost)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// terraformExport writes the ladder's closed plan as Terraform for the
// cyrilgdn/rabbitmq provider, formatted as `terraform fmt` formats it.
// Bindings refer to the exchange and queue resources, so Terraform creates
// them first and destroys them last.
func terraformExport(l topology.Ladder, plan topology.Plan) []byte {
	p := plan.Closed()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", describe(l))
	fmt.Fprintf(&b, "# Written by rungs export (%s): %s, %s, %s.\n", Version,
		topology.Counted(len(p.Exchanges), "exchange", "exchanges"), topology.Counted(len(p.Queues), "queue", "queues"), topology.Counted(len(p.Bindings), "binding", "bindings"))
	b.WriteString("# Check it after apply: rungs plan --ladder " + l.Name + " --vhost VHOST (exit 0: no drift).\n\n")
	b.WriteString("terraform {\n  required_providers {\n    rabbitmq = {\n      source = \"cyrilgdn/rabbitmq\"\n    }\n  }\n}\n\n")
	b.WriteString("variable \"vhost\" {\n")
	writeAttrs(&b, "  ", [][2]string{
		{"description", hclString("vhost the ladder is declared in")},
		{"type", "string"},
		{"default", hclString(l.Vhost)},
	})
	b.WriteString("}\n")

	names := newTFNames()
	xref := map[string]string{}
	for _, x := range p.Exchanges {
		id := names.take("rabbitmq_exchange", x.Name)
		xref[x.Name] = "rabbitmq_exchange." + id + ".name"
		fmt.Fprintf(&b, "\nresource \"rabbitmq_exchange\" %s {\n", hclString(id))
		writeAttrs(&b, "  ", [][2]string{{"name", hclString(x.Name)}, {"vhost", "var.vhost"}})
		b.WriteString("\n  settings {\n")
		writeAttrs(&b, "    ", [][2]string{
			{"type", hclString(x.Type)}, {"durable", fmt.Sprint(x.Durable)}, {"auto_delete", fmt.Sprint(x.AutoDelete)},
		})
		if len(x.Args) > 0 {
			// The provider's exchange arguments are a map of strings.
			b.WriteString("    arguments = {\n")
			writeAttrs(&b, "      ", argPairs(x.Args, func(v any) string { return hclString(fmt.Sprint(v)) }))
			b.WriteString("    }\n")
		}
		b.WriteString("  }\n}\n")
	}
	qref := map[string]string{}
	for _, q := range p.Queues {
		id := names.take("rabbitmq_queue", q.Name)
		qref[q.Name] = "rabbitmq_queue." + id + ".name"
		fmt.Fprintf(&b, "\nresource \"rabbitmq_queue\" %s {\n", hclString(id))
		writeAttrs(&b, "  ", [][2]string{{"name", hclString(q.Name)}, {"vhost", "var.vhost"}})
		b.WriteString("\n  settings {\n")
		writeAttrs(&b, "    ", [][2]string{{"durable", fmt.Sprint(q.Durable)}, {"auto_delete", fmt.Sprint(q.AutoDelete)}})
		if len(q.Args) > 0 {
			// arguments_json keeps numbers numbers: x-message-ttl must not
			// become the string "1000".
			b.WriteString("    arguments_json = jsonencode({\n")
			writeAttrs(&b, "      ", argPairs(q.Args, hclValue))
			b.WriteString("    })\n")
		}
		b.WriteString("  }\n}\n")
	}
	for _, bd := range p.Bindings {
		dst := qref[bd.Destination]
		if bd.DestinationType == topology.ToExchange {
			dst = xref[bd.Destination]
		}
		id := names.take("rabbitmq_binding", bd.Source+"__"+bd.Destination)
		fmt.Fprintf(&b, "\nresource \"rabbitmq_binding\" %s {\n", hclString(id))
		writeAttrs(&b, "  ", [][2]string{
			{"source", xref[bd.Source]}, {"vhost", "var.vhost"}, {"destination", dst},
			{"destination_type", hclString(bd.DestinationType)}, {"routing_key", hclString(bd.RoutingKey)},
		})
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

// writeAttrs writes attribute lines with their = signs aligned, as
// terraform fmt aligns consecutive attributes.
func writeAttrs(b *strings.Builder, indent string, kvs [][2]string) {
	w := 0
	for _, kv := range kvs {
		w = max(w, len(kv[0]))
	}
	for _, kv := range kvs {
		fmt.Fprintf(b, "%s%-*s = %s\n", indent, w, kv[0], kv[1])
	}
}

// argPairs lists arguments in key order, keys quoted (x-message-ttl is not
// an identifier), values written by val.
func argPairs(a topology.Args, val func(any) string) [][2]string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][2]string, len(keys))
	for i, k := range keys {
		out[i] = [2]string{hclString(k), val(topology.NormalizeArg(a[k]))}
	}
	return out
}

// hclValue writes an argument value: integers and booleans bare, anything
// else as a string.
func hclValue(v any) string {
	switch x := v.(type) {
	case int64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	}
	return hclString(fmt.Sprint(v))
}

// hclString quotes s for HCL: JSON escapes, plus HCL's template sequences
// ${ and %{, which would otherwise be interpolated.
func hclString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	q := strings.TrimSuffix(b.String(), "\n")
	q = strings.ReplaceAll(q, "${", "$${")
	return strings.ReplaceAll(q, "%{", "%%{")
}

// tfNames hands out Terraform resource names: identifiers made from object
// names, unique per resource type, stable for a given ladder so that a
// re-export does not rename (and so replace) resources.
type tfNames struct{ used map[string]bool }

func newTFNames() *tfNames { return &tfNames{used: map[string]bool{}} }

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func (n *tfNames) take(kind, name string) string {
	id := nonIdent.ReplaceAllString(name, "_")
	if id == "" || id[0] >= '0' && id[0] <= '9' || id[0] == '-' {
		id = "_" + id
	}
	if n.used[kind+"."+id] {
		// Two names that differ only in characters an identifier cannot
		// hold ("a.b" and "a_b"): a hash of the real name tells them apart.
		h := fnv.New32a()
		_, _ = h.Write([]byte(name))
		base := fmt.Sprintf("%s_%08x", id, h.Sum32())
		id = base
		for i := 2; n.used[kind+"."+id]; i++ {
			id = fmt.Sprintf("%s_%d", base, i)
		}
	}
	n.used[kind+"."+id] = true
	return id
}
