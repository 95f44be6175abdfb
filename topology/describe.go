package topology

import "fmt"

// Describe is the one-line summary of a ladder's shape that every command
// and doctor print.
func (l Ladder) Describe() string {
	radix := ""
	if l.Radix != 2 {
		radix = fmt.Sprintf(", radix %d", l.Radix)
	}
	return fmt.Sprintf("%s ladder %q in vhost %s: %d levels of %s%s, max delay %s, %s queues%s",
		l.Layout, l.Name, l.Vhost, l.Levels, FormatDelay(l.Unit), radix, FormatDelay(l.MaxDelay()), l.QueueType, l.strategyNote())
}

// strategyNote names a strategy other than the queue type's own, so
// that a ladder that trades safety for speed says so wherever it is
// described.
func (l Ladder) strategyNote() string {
	if l.AtMostOnce {
		return ", dead-lettering " + l.DeadLetterStrategy()
	}
	return ""
}

// Shape is a ladder's shape in a few words: 20 levels of 1s, radix 2, classic.
func (l Ladder) Shape() string {
	return fmt.Sprintf("%d levels of %s, radix %d, %s%s", l.Levels, FormatDelay(l.Unit), l.Radix, l.QueueType, l.strategyNote())
}

// SameShape reports whether two ladders lay out the same objects and
// keys: two shapes under one name share its exchanges. The dead-letter
// strategy is no part of it: the same objects, with one argument that
// differs (apply says so on its own).
func (l Ladder) SameShape(o Ladder) bool {
	return l.Layout == o.Layout && l.Unit == o.Unit && l.Radix == o.Radix && l.Levels == o.Levels && l.QueueType == o.QueueType
}
