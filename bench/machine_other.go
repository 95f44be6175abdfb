//go:build !linux

package bench

func totalMemory() int64 { return 0 }

func loadAverages() ([3]float64, bool) { return [3]float64{}, false }
