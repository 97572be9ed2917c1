//go:build !linux

package controller

// releaseStartupPages does nothing outside Linux (see startuppages_linux.go).
func releaseStartupPages() (int64, error) { return 0, nil }
