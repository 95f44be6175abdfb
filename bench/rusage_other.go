//go:build !unix

package bench

import "os"

// maxRSS is unknown here; the benchmark samples /proc where there is one.
func maxRSS(*os.ProcessState) int64 { return 0 }
