package ops

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Where reads HEADER=VALUE terms into a matcher that accepts headers in
// which every named header holds that value. It compares values, not
// their drawing: a byte array holding the text matches it, a number
// matches its decimal form ("7" matches 7 of any integer type, "0.5" a
// float of 0.5), a boolean true or false, a timestamp its RFC 3339 form
// or its Unix seconds. Tables and arrays match nothing.
func Where(terms []string) (func(headers map[string]any) bool, error) {
	want := map[string]string{}
	for _, kv := range terms {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fieldErr("where", "%q: want HEADER=VALUE", kv)
		}
		want[k] = v
	}
	return func(h map[string]any) bool {
		for k, v := range want {
			hv, ok := h[k]
			if !ok || !HeaderValueIs(hv, v) {
				return false
			}
		}
		return true
	}, nil
}

// HeaderValueIs reports whether a header value, as AMQP decoded it, is the
// value want spells (see Where).
func HeaderValueIs(v any, want string) bool {
	switch x := v.(type) {
	case string:
		return x == want
	case []byte:
		return string(x) == want
	case bool:
		b, err := strconv.ParseBool(want)
		return err == nil && b == x
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64:
		n, ok := new(big.Int).SetString(strings.TrimSpace(want), 10)
		return ok && n.String() == fmt.Sprint(x)
	case float32:
		f, err := strconv.ParseFloat(want, 32)
		return err == nil && float32(f) == x
	case float64:
		f, err := strconv.ParseFloat(want, 64)
		return err == nil && f == x
	case time.Time:
		if t, err := time.Parse(time.RFC3339, want); err == nil {
			return t.Equal(x)
		}
		s, err := strconv.ParseInt(want, 10, 64)
		return err == nil && x.Unix() == s
	}
	return false
}
