package topology

import (
	"fmt"
	"strings"
)

// MaxShortString is AMQP's limit for header names, the content type and
// the message id: a longer one fails the whole publish mid-run.
const MaxShortString = 255

// ParseHeaders reads message headers, one KEY=VALUE each: this is the one
// header syntax rungs accepts, from `--header` (repeatable) and from the
// console's headers field (the same pairs, separated by commas; see
// SplitHeaders). Spaces around KEY and VALUE are dropped; KEY must not be
// empty and fits AMQP's 255 bytes. Values stay strings: guessing types
// would make "007" a number, and strings survive every client. A later
// KEY replaces an earlier one.
func ParseHeaders(kvs []string) (map[string]any, error) {
	h := map[string]any{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok || k == "":
			return nil, fmt.Errorf("%q is not key=value", strings.TrimSpace(kv))
		case len(k) > MaxShortString:
			return nil, fmt.Errorf("the name is %d bytes; AMQP allows at most %d", len(k), MaxShortString)
		}
		h[k] = strings.TrimSpace(v)
	}
	return h, nil
}

// SplitHeaders splits a one-line list of headers, "k=v, k=v", into the
// pairs ParseHeaders reads. A value in such a list cannot hold a comma;
// `--header` can.
func SplitHeaders(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) != "" {
			out = append(out, part)
		}
	}
	return out
}
