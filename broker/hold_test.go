package broker

import "testing"

// TestNeedsConsumer: the credit a holder keeps ahead of its reader is
// between half a window and one and a half, whatever the reader has done.
func TestNeedsConsumer(t *testing.T) {
	const w = 100
	consumers := 1
	for outstanding := 0; outstanding <= 10*w; outstanding++ {
		for needsConsumer(outstanding, consumers, w) {
			consumers++
		}
		ahead := consumers*w - outstanding
		if ahead <= w/2 || ahead > w+w/2 {
			t.Fatalf("%d outstanding, %d consumers: %d of credit ahead", outstanding, consumers, ahead)
		}
	}
	if needsConsumer(0, 1, w) || !needsConsumer(w/2, 1, w) {
		t.Error("the first consumer is topped up at half its window")
	}
}
