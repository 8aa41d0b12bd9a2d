package pki

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// errNoExchange: the system or the file system cannot exchange two
// directories atomically.
var errNoExchange = errors.New("atomic directory exchange not supported")

// exchangeDirs atomically exchanges the directories a and b
// (renameat2(2) with RENAME_EXCHANGE). Tests set it to force the fallback.
var exchangeDirs = func(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return errNoExchange
	default:
		return fmt.Errorf("exchange %s and %s: %w", a, b, err)
	}
}
