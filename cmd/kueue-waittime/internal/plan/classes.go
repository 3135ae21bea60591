package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/kueue-waittime/kueue-waittime/cmd/kueue-waittime/internal/cli"
	"github.com/kueue-waittime/kueue-waittime/pkg/capacity"
)

// The document kind plan reads workload classes from.
const (
	ClassesAPIVersion = "kueue-waittime.x-k8s.io/v1alpha1"
	ClassesKind       = "WorkloadClasses"
)

// workloadClassesDoc is the WorkloadClasses document as written.
type workloadClassesDoc struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   *objectMeta `json:"metadata,omitempty"`
	Classes    []classSpec `json:"classes"`
}

// objectMeta allows a name on the document, for people who keep it next
// to Kubernetes objects; it is not used.
type objectMeta struct {
	Name string `json:"name,omitempty"`
}

type classSpec struct {
	Name            string        `json:"name"`
	ClusterQueue    string        `json:"clusterQueue"`
	Priority        int32         `json:"priority"`
	PodSets         []podSetSpec  `json:"podSets"`
	ArrivalRate     *float64      `json:"arrivalRate"`
	ArrivalsPerHour *float64      `json:"arrivalsPerHour"`
	MeanService     *quantityText `json:"meanService"`
	ServiceCV       *float64      `json:"serviceCV"`
	ArrivalCV       *float64      `json:"arrivalCV"`
}

type podSetSpec struct {
	Name     string                  `json:"name"`
	Count    *int64                  `json:"count"`
	Requests map[string]quantityText `json:"requests"`
}

// quantityText is a scalar written as a string or a number (`cpu: 2` and
// `cpu: "2"` alike), kept as text for the quantity or duration parser.
type quantityText string

func (q *quantityText) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*q = quantityText(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("want a string or a number, got %s", data)
	}
	*q = quantityText(n.String())
	return nil
}

// Class is a validated workload class: a representative workload of one
// ClusterQueue with its arrival process and service-time distribution.
type Class struct {
	Name         string
	ClusterQueue string
	Priority     int32
	Workload     capacity.Workload
	// ArrivalRate is λ per second.
	ArrivalRate float64
	// MeanService is E[S] in seconds.
	MeanService float64
	// ServiceSCV is C_S² and ArrivalSCV is c_a² (the squared coefficients
	// of variation).
	ServiceSCV, ArrivalSCV float64
}

// decodeClasses decodes one WorkloadClasses document (JSON) strictly and
// validates every class; where names the document in messages.
func decodeClasses(data []byte, where string) ([]Class, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc workloadClassesDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, cli.Usagef("%s: %s: %v", where, ClassesKind, err)
	}
	if len(doc.Classes) == 0 {
		return nil, cli.Usagef("%s: %s: classes: at least one class is required", where, ClassesKind)
	}
	out := make([]Class, 0, len(doc.Classes))
	for i, spec := range doc.Classes {
		c, err := spec.validate()
		if err != nil {
			name := ""
			if spec.Name != "" {
				name = " (" + spec.Name + ")"
			}
			return nil, cli.Usagef("%s: %s: classes[%d]%s: %v", where, ClassesKind, i, name, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func (s classSpec) validate() (Class, error) {
	c := Class{Name: strings.TrimSpace(s.Name), ClusterQueue: strings.TrimSpace(s.ClusterQueue), Priority: s.Priority}
	switch {
	case c.Name == "":
		return c, fmt.Errorf("name is required")
	case c.ClusterQueue == "":
		return c, fmt.Errorf("clusterQueue is required")
	case s.ArrivalRate != nil && s.ArrivalsPerHour != nil:
		return c, fmt.Errorf("arrivalRate and arrivalsPerHour exclude each other")
	case s.ArrivalRate == nil && s.ArrivalsPerHour == nil:
		return c, fmt.Errorf("one of arrivalRate (per second) or arrivalsPerHour is required")
	case s.MeanService == nil:
		return c, fmt.Errorf("meanService is required (a Go duration such as 20s)")
	case len(s.PodSets) == 0:
		return c, fmt.Errorf("podSets: at least one pod set is required")
	}
	var err error
	if s.ArrivalRate != nil {
		if c.ArrivalRate, err = nonNegative("arrivalRate", *s.ArrivalRate); err != nil {
			return c, err
		}
	} else {
		perHour, err := nonNegative("arrivalsPerHour", *s.ArrivalsPerHour)
		if err != nil {
			return c, err
		}
		c.ArrivalRate = perHour / 3600
	}
	if c.MeanService, err = cli.PositiveDuration(string(*s.MeanService)); err != nil {
		return c, fmt.Errorf("meanService: %v", err)
	}
	c.ServiceSCV, c.ArrivalSCV = 1, 1
	if s.ServiceCV != nil {
		cv, err := nonNegative("serviceCV", *s.ServiceCV)
		if err != nil {
			return c, err
		}
		c.ServiceSCV = cv * cv
	}
	if s.ArrivalCV != nil {
		cv, err := nonNegative("arrivalCV", *s.ArrivalCV)
		if err != nil {
			return c, err
		}
		c.ArrivalSCV = cv * cv
	}
	for _, v := range []float64{c.ServiceSCV, c.ArrivalSCV} {
		if math.IsInf(v, 0) {
			return c, fmt.Errorf("coefficient of variation too large")
		}
	}

	names := map[string]bool{}
	demandsSomething := false
	for i, ps := range s.PodSets {
		name := strings.TrimSpace(ps.Name)
		if name == "" {
			name = fmt.Sprintf("ps%d", i)
		}
		if names[name] {
			return c, fmt.Errorf("podSets[%d]: pod set name %q is used twice", i, name)
		}
		names[name] = true
		count := int64(1)
		if ps.Count != nil {
			count = *ps.Count
		}
		if count < 1 {
			return c, fmt.Errorf("podSets[%d]: count must be >= 1, got %d", i, count)
		}
		requests := make(map[string]int64, len(ps.Requests))
		for r, raw := range ps.Requests {
			if r == capacity.PodsResource {
				return c, fmt.Errorf("podSets[%d].requests: pods is not requested: each pod counts as one against a pods quota", i)
			}
			v, err := cli.Quantity(r, string(raw))
			if err != nil {
				return c, fmt.Errorf("podSets[%d].requests.%v", i, err)
			}
			requests[r] = v
			demandsSomething = demandsSomething || v > 0
		}
		c.Workload.PodSets = append(c.Workload.PodSets, capacity.PodSet{Name: name, Count: count, Requests: requests})
	}
	if !demandsSomething {
		return c, fmt.Errorf("podSets: the class requests no resource (every request is 0)")
	}
	return c, nil
}

func nonNegative(field string, v float64) (float64, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%s must be a finite number >= 0, got %v", field, v)
	}
	return v, nil
}
