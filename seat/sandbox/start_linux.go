package sandbox

import (
	"os"
	"syscall"
)

// namespaceAttr is how the launcher is started in its own mount
// namespace: as root a new mount namespace only; otherwise also a new user
// namespace mapping the user to itself, with CAP_SYS_ADMIN kept across
// exec as an ambient capability (the launcher drops it before the agent
// runs). It also names the manager's own mount namespace, so the launcher
// can tell it really is in another.
func namespaceAttr() (*syscall.SysProcAttr, string, error) {
	host, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return nil, "", err
	}
	if os.Geteuid() == 0 {
		return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}, host, nil
	}
	uid, gid := os.Geteuid(), os.Getegid()
	return &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		AmbientCaps:                []uintptr{capSysAdmin},
	}, host, nil
}

const capSysAdmin = 21
