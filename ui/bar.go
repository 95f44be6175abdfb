package ui

import "strings"

// eighths are the partial blocks that give a bar cell eight steps.
var eighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// barText draws v out of max in w cells: full blocks, one partial block,
// then blank track. Any non-zero value shows at least a sliver, because an
// empty-looking bar on a rung that holds one message would hide it; a value
// above max fills the bar and ends in "+".
func barText(v, maxV int64, w int) (fill, track string) {
	if w <= 0 {
		return "", ""
	}
	if v <= 0 || maxV <= 0 {
		return "", strings.Repeat(" ", w)
	}
	if v > maxV {
		return strings.Repeat("█", w-1) + "+", ""
	}
	units := int(float64(v) / float64(maxV) * float64(w*8))
	units = max(units, 1)
	full, part := units/8, units%8
	fill = strings.Repeat("█", full) + eighths[part]
	n := full
	if part > 0 {
		n++
	}
	return fill, strings.Repeat(" ", w-n)
}
