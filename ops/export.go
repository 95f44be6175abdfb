package ops

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strings"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Export formats: how a ladder is written for infrastructure code to
// build instead of rungs.
const (
	ExportDefinitions = "definitions"
	ExportTerraform   = "terraform"
)

// ExportFormats are the formats Export writes.
var ExportFormats = []string{ExportDefinitions, ExportTerraform}

// CheckExportFormat refuses a format Export does not write, as an
// *InputError.
func CheckExportFormat(format string) error {
	if format != ExportDefinitions && format != ExportTerraform {
		return badInput("--format %q: want definitions or terraform", format)
	}
	return nil
}

// Export writes the ladder l's plan p, closed (destination queues and
// their exchanges included, since RabbitMQ refuses a binding to a queue
// that does not exist), in format; version is the rungs that wrote it,
// named in a Terraform file's header.
func Export(format string, l topology.Ladder, p topology.Plan, version string) ([]byte, error) {
	if err := CheckExportFormat(format); err != nil {
		return nil, err
	}
	if format == ExportTerraform {
		return terraformExport(l, p, version), nil
	}
	return definitionsExport(l, p)
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
func terraformExport(l topology.Ladder, plan topology.Plan, version string) []byte {
	p := plan.Closed()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", l.Describe())
	fmt.Fprintf(&b, "# Written by rungs export (%s): %s, %s, %s.\n", version,
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
