//go:build !unix

package gitrepo

import "sync"

var processLock sync.Mutex

// lockFile serializes branch moves within this process only: sharing the
// repositories' directory between processes needs a Unix system's flock.
func lockFile(string) (func(), error) {
	processLock.Lock()
	return processLock.Unlock, nil
}
