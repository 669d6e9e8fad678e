package main

import "syscall"

// dieWithParent kills the test binary's run when testexec exits.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
