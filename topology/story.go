package topology

// Story is what a message's headers and routing say happened to it: its
// x-death as a timeline, the x-death a replay into a ladder set aside,
// rungs' retry history and, for a direct ladder's message, the path its
// routing key spells. Peek's text, its JSON and the console's views all
// draw one Story; none reads the headers again.
type Story struct {
	// Deaths is x-death as the broker wrote it, newest first; DeathErr
	// says why it could not be read.
	Deaths   []Death
	DeathErr error
	// Hops are Deaths as a timeline, oldest first, each queue placed in
	// its ladder.
	Hops []DeathHop
	// Saved is x-rungs-x-death (HeaderSavedDeath) as a timeline.
	Saved []DeathHop
	// Retries is x-rungs-history, oldest first.
	Retries []Attempt
	// Path is the route a direct ladder's message takes, rebuilt from its
	// exchange and routing key (the broker strips the BCC header).
	Path *Trace
}

// StoryOf reads a message's story from its headers, the exchange that
// routed it and its routing key, naming queues after ladders.
func StoryOf(headers map[string]any, exchange, key string, ladders []Ladder) Story {
	var s Story
	s.Deaths, s.DeathErr = ParseDeaths(headers)
	if s.DeathErr == nil {
		s.Hops = Timeline(s.Deaths, ladders)
	}
	if saved, _ := ParseDeaths(map[string]any{HeaderDeath: headers[HeaderSavedDeath]}); len(saved) > 0 {
		s.Saved = Timeline(saved, ladders)
	}
	s.Retries = ParseHistory(headers)
	if tr, ok := RestingPath(ladders, exchange, key); ok && len(tr.BCC) > 0 {
		s.Path = &tr
	}
	return s
}

// DeadLettered says the message was dead-lettered at some point: it has
// an x-death (readable or not) or a saved one.
func (s Story) DeadLettered() bool {
	return len(s.Deaths) > 0 || s.DeathErr != nil || len(s.Saved) > 0
}
