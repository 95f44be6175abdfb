package broker

import (
	"bytes"
	"encoding/json"
)

// decodeAnswer decodes a management API answer into out, keeping numbers
// exact (json.Number) until mapArgs makes them int64.
//
// A listing can hold an object the broker deleted while it was listing:
// another client deleting vhosts or queues is all it takes. Measured while
// a client created and deleted vhosts, /api/vhosts?columns=name listed
// such an object as [] on 3.10.8 (956 of them in 300 listings), which no
// struct decodes, so it is dropped here; only an answer that may hold one
// pays for the second pass. 4.3.6 lists it as an object without a name
// ({"metadata":{…},"default_queue_type":"classic"}), which the readers of
// each listing skip; 4.0.5 answers 500 instead, and doGet asks again.
func decodeAnswer(body []byte, out any) error {
	if !mayHoldVanished(body) {
		return decodeExact(body, out)
	}
	var generic any
	if err := decodeExact(body, &generic); err != nil {
		return err
	}
	if !dropVanished(&generic) {
		return decodeExact(body, out)
	}
	cleaned, err := json.Marshal(generic)
	if err != nil {
		return err
	}
	return decodeExact(cleaned, out)
}

// vanishedMarks are how an empty item starts inside an array. The broker
// writes JSON without spaces; an empty map or list that is a field's value
// follows a colon instead.
var vanishedMarks = [][]byte{[]byte("[{}"), []byte(",{}"), []byte("[[]"), []byte(",[]")}

func mayHoldVanished(body []byte) bool {
	for _, m := range vanishedMarks {
		if bytes.Contains(body, m) {
			return true
		}
	}
	return false
}

func decodeExact(body []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	return dec.Decode(out)
}

// dropVanished removes the empty items of every listing in v, and reports
// whether it removed one. A listing is an array of objects; its empty
// items are {} or []. An array holding anything else is data and stays.
func dropVanished(v *any) bool {
	dropped := false
	switch x := (*v).(type) {
	case map[string]any:
		for k, e := range x {
			if dropVanished(&e) {
				x[k] = e
				dropped = true
			}
		}
	case []any:
		listing := true
		for _, e := range x {
			switch y := e.(type) {
			case map[string]any:
			case []any:
				listing = listing && len(y) == 0
			default:
				listing = false
			}
		}
		kept := x[:0]
		for _, e := range x {
			if listing && isEmpty(e) {
				dropped = true
				continue
			}
			if dropVanished(&e) {
				dropped = true
			}
			kept = append(kept, e)
		}
		*v = kept
	}
	return dropped
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}
