package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// scheduledRows are a few scheduled messages of the orders ladder: exact
// ones dated by rungs' headers and by x-death, a Celery eta, and one
// nothing dates (a window).
func scheduledRows(now time.Time) []ScheduledRow {
	return []ScheduledRow{
		{Due: now.Add(42 * time.Second), Exact: true, Basis: "rungs", Rung: "orders.delay.L01", Dest: "orders.work", MessageID: "ord-8812-timeout", Correlation: "order-8812", Preview: `{"order":8812,"kind":"payment-timeout"}`},
		{Due: now.Add(3*time.Minute + 10*time.Second), Exact: true, Basis: "x-death", Rung: "orders.delay.L02", Dest: "orders.work", MessageID: "ord-8813-timeout", Correlation: "order-8813", Preview: `{"order":8813}`},
		{Due: now.Add(40 * time.Minute), Exact: true, Basis: "eta", Rung: "celery_delayed_12", Dest: "celery", MessageID: "3f2a9c1e-77b0-4c55-9d1f-1b0e2d6a8f10", Correlation: "3f2a9c1e-77b0-4c55-9d1f-1b0e2d6a8f10", Preview: `[["reminder"],{},{}]`},
		{Due: now.Add(2 * time.Hour), Latest: now.Add(2*time.Hour + 16*time.Minute), Basis: "none", Rung: "orders.delay.L05", Dest: "orders.work"},
		{Due: now.Add(26 * time.Hour), Exact: true, Basis: "rungs", Rung: "orders.delay.L09", Dest: "orders.mail", MessageID: "mail-77", Preview: "Dear customer, your order"},
	}
}

// stackedRows is a Celery task whose key carries two older delay
// prefixes (celery/kombu#2556).
func stackedRows(now time.Time) []ScheduledRow {
	return []ScheduledRow{{Due: now.Add(100 * time.Second), Exact: true, Basis: "eta", Rung: "celery_delayed_6", Dest: "emails",
		MessageID: "9d1f1b0e", Preview: `[["retry"],{},{}]`, Warning: "key stacked 2×: 1 delayed retry left (kombu#2556)"}}
}

func TestScheduledViewGolden(t *testing.T) {
	now := time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)
	horizons := []Horizon{{"1m", 1, 3}, {"1h", 3, 40}, {"1d", 4, 310}, {"later", 1, 12}}
	cases := map[string]ScheduledState{
		"empty":               {Ladder: "orders", Phase: ScanDone, Now: now, Horizons: []Horizon{{"1m", 0, 0}, {"1h", 0, 0}, {"1d", 0, 0}, {"later", 0, 0}}},
		"scanning":            {Ladder: "orders", Phase: ScanRunning, Scanned: 1204, Total: 4000, Matched: 2, Rows: scheduledRows(now)[:2], Elapsed: 1500 * time.Millisecond, Now: now},
		"results":             {Ladder: "orders", Phase: ScanDone, Scanned: 412, Total: 412, Matched: 5, Rows: scheduledRows(now), Horizons: horizons, Selected: 2, Elapsed: 2 * time.Second, Now: now},
		"filtered":            {Ladder: "orders", Phase: ScanDone, Scanned: 412, Total: 412, Matched: 0, Filter: "corr=order-9999", Horizons: horizons, Now: now},
		"scanning-past-depth": {Ladder: "orders", Phase: ScanRunning, Scanned: 5200, Total: 4000, Matched: 5200, Now: now},
		"cancelled":           {Ladder: "orders", Phase: ScanCancelled, Scanned: 2000, Total: 4000, Matched: 2, Rows: scheduledRows(now)[:2], Now: now},
		"failed":              {Ladder: "orders", Phase: ScanFailed, Scanned: 10, Err: "scan orders.delay.L03: connection closed", Now: now},
		"stacked-key":         {Ladder: "celery", Phase: ScanDone, Scanned: 3, Total: 3, Matched: 1, Rows: stackedRows(now), Horizons: horizons, Now: now},
		// A new ladder: the scan found messages the statistics do not list yet.
		"no-statistics-yet": {Ladder: "orders", Phase: ScanDone, Scanned: 5, Matched: 5, Rows: scheduledRows(now), Now: now,
			Horizons: []Horizon{{"1m", 1, 0}, {"1h", 3, 0}, {"1d", 1, 0}, {"later", 0, 0}}},
	}
	for name, s := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz.w, sz.h), func(t *testing.T) {
				body := sz.h - HeaderHeight - 1
				view := ScheduledView(s, NewStyles(true), sz.w, body)
				checkFrame(t, view, sz.w, body)
				golden.RequireEqual(t, ansi.Strip(view))
			})
		}
	}
}

// A window is never shown as one instant, and a due time past is "due".
func TestScheduledTimes(t *testing.T) {
	now := time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)
	rows := scheduledRows(now)
	if got := DueText(rows[3], now); !strings.HasPrefix(got, "~") || !strings.Contains(got, "–") {
		t.Errorf("a window reads %q, want ~from–to", got)
	}
	if got := LeftText(rows[3], now); !strings.Contains(got, "–") {
		t.Errorf("a window's time left reads %q, want a range", got)
	}
	if got := DueText(rows[4], now); got != "03-15 11:26" {
		t.Errorf("tomorrow reads %q, want the date", got)
	}
	if got := LeftText(ScheduledRow{Due: now.Add(-time.Second), Exact: true}, now); got != "due" {
		t.Errorf("a past due time reads %q, want due", got)
	}
}
