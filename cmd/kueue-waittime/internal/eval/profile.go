package eval

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"
)

// mutexProfileFraction samples one in this many contention events on the
// process's mutexes while a run is profiled: every one, since a scenario
// runs minutes and the question is where the scheduler waits.
const mutexProfileFraction = 1

// blockProfileRate is, in nanoseconds, the blocking event (on a channel, a
// select, a condition variable or a mutex) the block profile records
// every time; shorter ones are sampled in proportion to their length.
const blockProfileRate = int(time.Millisecond)

// runProfile profiles this process — the in-process Kueue manager, its
// estimators and the harness; kube-apiserver and etcd run apart — while one
// scenario runs (eval --profile): its CPU, in <name>-cpu.pprof; where its
// goroutines blocked, in <name>-block.pprof (by the blocked goroutine's
// stack: where the scheduler waits); and the time they waited on contended
// mutexes, in <name>-mutex.pprof (by the stack that held the mutex). The
// last two are cumulative since the first profiled scenario of the
// invocation, as Go keeps them. Read them with `go tool pprof`.
type runProfile struct {
	cpu                *os.File
	blockOut, mutexOut string
}

// startRunProfile starts profiling into dir for the scenario name.
func startRunProfile(dir, name string) (*runProfile, error) {
	f, err := os.Create(filepath.Join(dir, name+"-cpu.pprof"))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(fmt.Errorf("profile %s: %w", name, err), f.Close())
	}
	runtime.SetMutexProfileFraction(mutexProfileFraction)
	runtime.SetBlockProfileRate(blockProfileRate)
	return &runProfile{cpu: f, blockOut: filepath.Join(dir, name+"-block.pprof"), mutexOut: filepath.Join(dir, name+"-mutex.pprof")}, nil
}

// stop ends the profiles and writes them.
func (p *runProfile) stop() error {
	pprof.StopCPUProfile()
	runtime.SetMutexProfileFraction(0)
	runtime.SetBlockProfileRate(0)
	return errors.Join(p.cpu.Close(), writeProfile("block", p.blockOut), writeProfile("mutex", p.mutexOut))
}

// writeProfile writes the named runtime profile to path.
func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(pprof.Lookup(name).WriteTo(f, 0), f.Close())
}
