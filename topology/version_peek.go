package topology

// QuorumPeekCounts says in a few words what a peek's hand-back does to a
// quorum message's counters on this release (see QuorumRequeueNackCounts
// and QuorumStampsAcquiredCount): before 4.3 x-delivery-count rises by
// one; from 4.3 (measured on 4.3.6) x-delivery-count stays and
// x-acquired-count rises. An unknown release is taken to count, the
// careful side.
func (v Version) QuorumPeekCounts() string {
	switch {
	case v.QuorumRequeueNackCounts():
		return "raised x-delivery-count by 1"
	case v.QuorumStampsAcquiredCount():
		return "raised x-acquired-count by 1 (x-delivery-count unchanged)"
	}
	return "left x-delivery-count unchanged"
}
