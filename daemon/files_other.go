//go:build !unix

package daemon

import (
	"errors"
	"net"
	"os"
)

func passable(*os.File) bool { return false }

func sendFiles(net.Conn, *os.File, *os.File) error { return errors.New("not supported") }

func receiveFiles(net.Conn) (*os.File, *os.File, error) { return nil, nil, errors.New("not supported") }
