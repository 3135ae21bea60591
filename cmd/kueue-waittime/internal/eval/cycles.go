package eval

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// cycleMessage is what Kueue's scheduler logs, at V(2), when a scheduling
// cycle has obtained its heads (with headCount and waitDuration, and the
// cycle's number as schedulingCycle among the logger's values).
const cycleMessage = "Obtained heads"

// schedulingCycle is one scheduling cycle as Kueue's scheduler logged it:
// when it obtained its heads, its number, how many heads it obtained and
// how long it had waited for them (blocked on empty queues).
type schedulingCycle struct {
	at     time.Time
	number int64
	heads  int
	wait   time.Duration
}

// cycleRecorder keeps the scheduling cycles of a run (eval --cycles). Its
// sink (see sink) takes the place of the discarded log of the in-process
// Kueue and keeps only the scheduler's cycleMessage lines; now stamps
// them.
type cycleRecorder struct {
	now    func() time.Time
	mu     sync.Mutex
	cycles []schedulingCycle
}

// sink returns the log sink that records r's cycles.
func (r *cycleRecorder) sink() logr.LogSink { return cycleSink{recorder: r} }

// writeCSV writes the recorded cycles, in the order they were logged, as
// at_unix_s,cycle,heads,wait_s.
func (r *cycleRecorder) writeCSV(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"at_unix_s", "cycle", "heads", "wait_s"}); err != nil {
		return err
	}
	for _, c := range r.cycles {
		if err := cw.Write([]string{
			strconv.FormatFloat(float64(c.at.UnixMicro())/1e6, 'f', 6, 64),
			strconv.FormatInt(c.number, 10),
			strconv.Itoa(c.heads),
			strconv.FormatFloat(c.wait.Seconds(), 'f', 6, 64),
		}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// cycleSink is a logr.LogSink that hands the scheduler's cycleMessage
// lines to its recorder and drops everything else. It is enabled up to
// V(2), the message's level.
type cycleSink struct {
	recorder *cycleRecorder
	values   []any
}

func (cycleSink) Init(logr.RuntimeInfo)          {}
func (cycleSink) Enabled(level int) bool         { return level <= 2 }
func (cycleSink) Error(error, string, ...any)    {}
func (s cycleSink) WithName(string) logr.LogSink { return s }
func (s cycleSink) WithValues(kv ...any) logr.LogSink {
	return cycleSink{recorder: s.recorder, values: append(slices.Clip(s.values), kv...)}
}

// Info records a cycleMessage line whose head count and wait it can read
// (an int and a time.Duration, as Kueue logs them); the cycle's number is
// 0 when the logger carries none.
func (s cycleSink) Info(_ int, msg string, kv ...any) {
	if msg != cycleMessage {
		return
	}
	c := schedulingCycle{at: s.recorder.now()}
	var haveHeads, haveWait bool
	for _, pairs := range [][]any{s.values, kv} {
		for i := 0; i+1 < len(pairs); i += 2 {
			switch key, v := pairs[i], pairs[i+1]; key {
			case "schedulingCycle":
				if n, ok := v.(int64); ok {
					c.number = n
				}
			case "headCount":
				c.heads, haveHeads = v.(int)
			case "waitDuration":
				c.wait, haveWait = v.(time.Duration)
			}
		}
	}
	if !haveHeads || !haveWait {
		return
	}
	s.recorder.mu.Lock()
	defer s.recorder.mu.Unlock()
	s.recorder.cycles = append(s.recorder.cycles, c)
}
