package cli

import (
	"fmt"
	"strings"
	"testing"
)

func TestTableDropsTrailingPadding(t *testing.T) {
	var b strings.Builder
	tw := table(&b)
	fmt.Fprintln(tw, "hop\tqueue\tttl\tenters\tleaves")
	fmt.Fprintln(tw, "1\tdemo.rung.01.5\t1m20s\t0s\t1m20s")
	fmt.Fprintln(tw, "→\tdemo.done\t\t1m30s\t")
	fmt.Fprintln(tw, "2\tq  r\t\t\t")
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "hop  queue           ttl    enters  leaves\n" +
		"1    demo.rung.01.5  1m20s  0s      1m20s\n" +
		"→    demo.done              1m30s\n" +
		"2    q  r\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}
