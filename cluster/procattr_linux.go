package cluster

import "syscall"

// childAttr puts a child in its own process group (a terminal's Ctrl-C
// reaches up alone, which stops the children in order) and has the kernel
// kill it when up's process dies, however it dies (kill -9 included), so
// that no server keeps running and holding its state directory's lock
// after up is gone. (The parent-death signal is tied to the OS thread that
// started the child; the Go runtime keeps its threads unless a goroutine
// exits while locked to one, which up never does.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
