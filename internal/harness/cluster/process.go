package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// process is one component of the cluster running as a child process, its
// standard output and error appended to <dir>/logs/<name>.log.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd

	done chan struct{} // closed when the process has exited
	err  error         // its exit status: written before done is closed, read after
}

// startProcess starts binary with args in workDir (the cluster directory
// when empty) and extra environment variables.
func startProcess(dir, name, workDir string, env []string, binary string, args ...string) (*process, error) {
	logDir := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Dir = workDir
	if cmd.Dir == "" {
		cmd.Dir = dir
	}
	cmd.Env = append(os.Environ(), env...)
	// Its own process group: a Ctrl-C at the terminal reaches the cluster,
	// which stops its components in order, not every child at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("cluster: starting %s (%s): %w", name, binary, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has exited, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM and waits up to grace for the process to exit, then
// kills it. A process that was already gone is not an error; the exit
// status of a terminated process is not one either.
func (p *process) stop(grace time.Duration) error {
	if gone, _ := p.exited(); gone {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cluster: stopping %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
		return p.kill()
	}
}

// kill sends SIGKILL (kill -9) and waits for the process to exit.
func (p *process) kill() error {
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("cluster: killing %s: %w", p.name, err)
	}
	<-p.done
	return nil
}

// tail returns the last n bytes of the process's log, for error messages.
func (p *process) tail(n int64) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-n, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return ""
	}
	return string(buf)
}
