package eval

import (
	"encoding/csv"
	"fmt"
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

// requeueMessage is what Kueue's scheduler logs, at V(2), for every head
// of a cycle it did not admit, as it puts the head back in its queue: with
// the entry's status — "" (Kueue's notNominated): no flavor assignment fit
// or could preempt when the cycle nominated its heads; "skipped": it was
// nominated, but a head processed earlier in the same cycle took the quota
// or the preemption targets it needed; "nominated", "preemptionGated" and
// the like: it failed later for another reason — and the cycle's number
// among the logger's values.
const requeueMessage = "Workload re-queued"

// phaseMessages are what Kueue's scheduler logs, at V(2), as a cycle ends
// each of its phases, with the phase's duration: the cache's snapshot, the
// nomination of the heads (their flavor assignment, and the preemption
// targets of those that need them), and the processing of the entries
// (admitting, skipping, then putting back those not admitted and writing
// their status: Kueue logs the phase's end after that).
var phaseMessages = map[string]cyclePhase{
	"Snapshot taken":           snapshotPhase,
	"Nomination done":          nominationPhase,
	"Workload processing done": processingPhase,
}

type cyclePhase int

const (
	snapshotPhase cyclePhase = iota
	nominationPhase
	processingPhase
	cyclePhases
)

// schedulingCycle is one scheduling cycle as Kueue's scheduler logged it:
// when it obtained its heads, its number, how many heads it obtained and
// how long it had waited for them (blocked on empty queues), how long each
// of its phases took (0: not logged), and how many of the heads it put
// back not admitted, by status: not nominated, skipped, or anything else.
type schedulingCycle struct {
	at                             time.Time
	number                         int64
	heads                          int
	wait                           time.Duration
	phases                         [cyclePhases]time.Duration
	notNominated, skipped, requeue int
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
// at_unix_s,cycle,heads,wait_s,snapshot_s,nomination_s,processing_s,
// not_nominated,skipped,requeued_other.
func (r *cycleRecorder) writeCSV(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"at_unix_s", "cycle", "heads", "wait_s", "snapshot_s", "nomination_s", "processing_s", "not_nominated", "skipped", "requeued_other"}); err != nil {
		return err
	}
	for _, c := range r.cycles {
		if err := cw.Write([]string{
			strconv.FormatFloat(float64(c.at.UnixMicro())/1e6, 'f', 6, 64),
			strconv.FormatInt(c.number, 10),
			strconv.Itoa(c.heads),
			strconv.FormatFloat(c.wait.Seconds(), 'f', 6, 64),
			strconv.FormatFloat(c.phases[snapshotPhase].Seconds(), 'f', 6, 64),
			strconv.FormatFloat(c.phases[nominationPhase].Seconds(), 'f', 6, 64),
			strconv.FormatFloat(c.phases[processingPhase].Seconds(), 'f', 6, 64),
			strconv.Itoa(c.notNominated),
			strconv.Itoa(c.skipped),
			strconv.Itoa(c.requeue),
		}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// cycleSink is a logr.LogSink that hands the scheduler's cycleMessage,
// phaseMessages and requeueMessage lines to its recorder and drops
// everything else. It is enabled up to V(2), the messages' level.
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
// (an int and a time.Duration, as Kueue logs them; the cycle's number is 0
// when the logger carries none); a phase's line (with its duration) or a
// requeueMessage line goes to the last recorded cycle when it carries that
// cycle's number.
func (s cycleSink) Info(_ int, msg string, kv ...any) {
	phase, isPhase := phaseMessages[msg]
	if msg != cycleMessage && !isPhase && msg != requeueMessage {
		return
	}
	c := schedulingCycle{at: s.recorder.now()}
	var haveHeads, haveWait, haveNumber bool
	var status string
	var duration time.Duration
	for _, pairs := range [][]any{s.values, kv} {
		for i := 0; i+1 < len(pairs); i += 2 {
			switch key, v := pairs[i], pairs[i+1]; key {
			case "schedulingCycle":
				c.number, haveNumber = v.(int64)
			case "headCount":
				c.heads, haveHeads = v.(int)
			case "waitDuration":
				c.wait, haveWait = v.(time.Duration)
			case "status":
				// Kueue's own string type.
				status = fmt.Sprint(v)
			case "duration":
				duration, _ = v.(time.Duration)
			}
		}
	}
	if msg != cycleMessage {
		if haveNumber {
			s.recorder.addToCycle(c.number, isPhase, phase, duration, status)
		}
		return
	}
	if !haveHeads || !haveWait {
		return
	}
	s.recorder.mu.Lock()
	defer s.recorder.mu.Unlock()
	s.recorder.cycles = append(s.recorder.cycles, c)
}

// addToCycle records, if cycle number is the last recorded one, that it
// ended a phase after duration (isPhase), or else that it put back a head
// with status.
func (r *cycleRecorder) addToCycle(number int64, isPhase bool, phase cyclePhase, duration time.Duration, status string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cycles) == 0 {
		return
	}
	last := &r.cycles[len(r.cycles)-1]
	if last.number != number {
		return
	}
	if isPhase {
		last.phases[phase] = duration
		return
	}
	switch status {
	case "":
		last.notNominated++
	case "skipped":
		last.skipped++
	default:
		last.requeue++
	}
}
