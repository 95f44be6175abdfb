package topology

import (
	"strings"
	"testing"
)

func TestParseHeaders(t *testing.T) {
	h, err := ParseHeaders([]string{"tenant=acme", " id = 007 ", "note=a=b", "list=x,y", "empty="})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"tenant": "acme", "id": "007", "note": "a=b", "list": "x,y", "empty": ""}
	for k, v := range want {
		if h[k] != v {
			t.Errorf("%s = %q, want %q", k, h[k], v)
		}
	}
	for _, bad := range []string{"novalue", "=v", "  =v"} {
		if _, err := ParseHeaders([]string{bad}); err == nil || !strings.Contains(err.Error(), "is not key=value") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := ParseHeaders([]string{strings.Repeat("k", 256) + "=v"}); err == nil || !strings.Contains(err.Error(), "AMQP allows at most 255") {
		t.Errorf("a 256-byte name: %v", err)
	}
	// The console's one-line list reads the same pairs.
	list, err := ParseHeaders(SplitHeaders("tenant=acme, id = 007,,"))
	if err != nil || len(list) != 2 || list["tenant"] != "acme" || list["id"] != "007" {
		t.Errorf("list: %v, %v", list, err)
	}
	if got := SplitHeaders("  "); len(got) != 0 {
		t.Errorf("blank list: %q", got)
	}
}
