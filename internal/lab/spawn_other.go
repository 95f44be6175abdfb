//go:build !linux

package lab

import (
	"os"
	"syscall"
)

// The lab measures memory on Linux only (procRSS reads /proc).
func childAttr() *syscall.SysProcAttr { return nil }

func peakRSS(*os.ProcessState) int64 { return 0 }

func closeOnExec(*os.File) {}
