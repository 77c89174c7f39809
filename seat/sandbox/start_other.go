//go:build !linux

package sandbox

import (
	"errors"
	"syscall"
)

func namespaceAttr() (*syscall.SysProcAttr, string, error) {
	return nil, "", errors.New("mount namespaces are a Linux feature")
}
