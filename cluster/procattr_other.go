//go:build !linux

package cluster

import "syscall"

// childAttr puts a child in its own process group (a terminal's Ctrl-C
// reaches up alone, which stops the children in order). Without Linux's
// parent-death signal a child may outlive an up killed by SIGKILL.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
