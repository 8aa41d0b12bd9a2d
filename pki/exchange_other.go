//go:build !linux

package pki

import "errors"

// errNoExchange: the system cannot exchange two directories atomically.
var errNoExchange = errors.New("atomic directory exchange not supported")

// exchangeDirs is not available here: switchBundle renames twice and
// recoverRotation completes an interrupted switch.
var exchangeDirs = func(a, b string) error { return errNoExchange }
