package testenv

import "syscall"

// dieWithParent kills a helper process when the test binary exits.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
